"""Custom agents: made from artifacts, described, locked, published to and installed from
libraries, exported to and imported from smolagents' folder format, assigned to work."""
