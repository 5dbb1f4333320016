"""What runs agents end to end, above the runner: deciding a proposal (``approval``), an
assigned agent picking up its task (``pickup``), QA reviews of an artifact (``qa``, cut in parts by
``review_parts``), and the setup every step is given before the runner takes it (``step_setup``)."""
