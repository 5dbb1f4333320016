"""The person's side of routine, outside the agents' runs: what routine tells them (``alerts``:
notes in the vault's Alerts/ folder; ``notifications``: messages through Apprise) and what it
reads of their day (``agenda``: their calendars)."""
