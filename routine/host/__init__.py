"""The host routine runs on: its service units and their checks, peers on the box, the daemon's
lock, the box's metrics, logging and thread supervision (base floor)."""
