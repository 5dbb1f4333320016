"""Trials (issue 28): a candidate model replays the journaled requests of real runs, its answers
judged beside the originals (``replay``), chosen from the journal (``select``), queued and run one
at a time (``queue``), and a scoreboard with a recommendation (``scores``). Never writes the vault
but ``Routine/Models.md``, and never switches a model."""
