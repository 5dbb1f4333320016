"""The daemon (`routine run`): lifecycle in ``app``, what is owed in ``due``, timers in
``timers``, the work queue in ``work``, hot reload in ``live``/``reload``, the control socket
in ``control``, status in ``status``."""
