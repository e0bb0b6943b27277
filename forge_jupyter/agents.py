"""Agents: a name, a mode (build or plan), an optional prompt, model and permission rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import InvalidOption
from .tools.permission import Rule

PLAN_PROMPT = (
    "You are in PLAN mode: read, inspect and analyse, then propose what to do. Tools that "
    "change files or state are not available to you."
)


@dataclass(frozen=True)
class Agent:
    name: str
    mode: Literal["build", "plan"] = "build"  # build: mutating tools ask · plan: denied
    prompt: str | None = None  # added to the system prompt
    model: str | None = None
    permissions: tuple[Rule, ...] = ()
    description: str = ""

    @classmethod
    def from_config(cls, name: str, value: dict[str, Any] | Agent) -> Agent:
        if isinstance(value, Agent):
            return value
        data = dict(value)
        rules = tuple(Rule.parse(r) for r in data.pop("permissions", ()))
        unknown = set(data) - {"mode", "prompt", "model", "description"}
        if unknown:
            raise ValueError(f"agent {name!r}: unknown settings {sorted(unknown)}; "
                             "use mode, prompt, model, permissions, description")
        return cls(name=name, permissions=rules, **data)


BUILTIN_AGENTS: dict[str, Agent] = {
    "build": Agent("build", "build", description="Does the work; asks before changing files or state."),
    "plan": Agent("plan", "plan", prompt=PLAN_PROMPT, description="Read-only: inspects and plans."),
}


@dataclass
class AgentSet:
    agents: dict[str, Agent] = field(default_factory=lambda: dict(BUILTIN_AGENTS))

    def get(self, name: str) -> Agent:
        try:
            return self.agents[name]
        except KeyError:
            # InvalidOption is a ValueError too; as a ForgeError a cell shows it as one line.
            raise InvalidOption(f"no agent named {name!r}; known agents: "
                                f"{', '.join(sorted(self.agents))}") from None

    def add(self, agent: Agent) -> Agent:
        self.agents[agent.name] = agent
        return agent
