"""The chapter reproduction: its sweeps, token costs and demo readers, and ``hoprag bench chapter``."""
