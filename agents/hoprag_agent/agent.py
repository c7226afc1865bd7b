"""The hoprag ADK app: SequentialAgent(planner, LoopAgent(grader, researcher), writer).

Wiring only: prompts live in :mod:`.prompts`, decisions of the offline model in :mod:`.policy`,
bookkeeping in :mod:`.callbacks`, caller-bound MCP tools in :mod:`.toolset`.
"""

from __future__ import annotations

import sys
import warnings

from google.adk.agents import LlmAgent, LoopAgent, SequentialAgent
from google.adk.tools import exit_loop

from hoprag import settings as hoprag_settings

from . import callbacks, config, models, offline_model, prompts  # noqa: F401  (offline_model registers the model)
from .config import AgentSettings
from .toolset import CallerToolset

warnings.filterwarnings("ignore", message=r".*deprecated in favor of Workflow.*", category=DeprecationWarning)


def build(settings: AgentSettings) -> tuple[SequentialAgent, CallerToolset]:
    """Build the agent tree for these settings; returns it with its toolset (to close it).

    Loads nothing: the corpus is the MCP server's to load, and the access file (who a session
    user is) is read on the first tool listing.
    """
    access_file = None if hoprag_settings.single_user(settings) else hoprag_settings.access_path(settings)
    toolset = CallerToolset(access_file=access_file, corpus=settings.corpus,
                            ranker=settings.ranker, mcp_url=settings.mcp_url, store=settings.store,
                            embedder=settings.embedder)
    common = dict(model=models.model_for(settings), include_contents="none",
                  on_model_error_callback=models.on_model_error(settings))
    tool_books = dict(before_tool_callback=callbacks.before_tool, after_tool_callback=callbacks.after_tool)
    planner = LlmAgent(name="planner", description="Decides start entity and goal relation; runs the first search.",
                       instruction=prompts.planner, tools=[toolset],
                       after_model_callback=callbacks.decision(callbacks.PLAN, prompts.show_plan),
                       after_agent_callback=callbacks.after_planner, **tool_books, **common)
    grader = LlmAgent(name="grader", description="Grades evidence: relevant vs supported; names the gap.",
                      instruction=prompts.grader,
                      after_model_callback=callbacks.decision(callbacks.GRADE, prompts.show_grade),
                      after_agent_callback=callbacks.after_grader, **common)
    researcher = LlmAgent(name="researcher", description="Fills the named gap or ends the loop.",
                          instruction=prompts.researcher, tools=[toolset, exit_loop], **tool_books, **common)
    writer = LlmAgent(name="writer", description="Writes the cited answer or the abstention.",
                      instruction=prompts.writer, output_key="answer",
                      after_model_callback=callbacks.markdown_lines, **common)
    loop = LoopAgent(name="research_loop", sub_agents=[grader, researcher], max_iterations=settings.max_iterations)
    root = SequentialAgent(name="hoprag", description="Agentic, permission-aware, cited retrieval.",
                           sub_agents=[planner, loop, writer],
                           before_agent_callback=callbacks.start_question(settings.search_budget, toolset.knows))
    return root, toolset


def __getattr__(name: str) -> object:
    """``root_agent`` (what ``adk web``, ``adk run`` and ``adk eval`` load) is built on first access, from the
    environment, saying on stderr when a model key is exported but unused or when it runs single-user
    (no access file); importing builds nothing."""
    global root_agent, toolset
    if name not in ("root_agent", "toolset"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    settings = config.resolve()
    note = config.unused_keys_note(settings)
    if note:
        print(note, file=sys.stderr)
    if hoprag_settings.single_user(settings):
        print(hoprag_settings.single_user_note(settings), file=sys.stderr)
    root_agent, toolset = build(settings)
    return globals()[name]
