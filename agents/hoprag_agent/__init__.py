"""The hoprag ADK app (``adk web agents`` lists it as ``hoprag_agent``)."""

from . import agent  # noqa: F401
