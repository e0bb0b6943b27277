"""What one prompt may still use — model steps, money, ``task`` depth — its subagents included.

The top prompt makes one Allowance; every ``task`` hands the same pool to its child run (one
level deeper), and every model step anywhere in the tree takes from it. So ``step_limit``,
``budget`` and ``max_tokens`` bound the whole prompt, not each run of it: a model cannot buy
itself more by delegating, and nesting stops at ``MAX_TASK_DEPTH``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

MAX_TASK_DEPTH = 3  # a prompt → its subagent → theirs → theirs; deeper ``task`` calls fail


@dataclass
class _Pool:
    """The counters the whole prompt tree shares (one lock: parallel subagents take from it)."""

    step_limit: int
    budget: float | None
    steps: int = 0
    spent: float = 0.0  # what finished steps cost
    streaming: float = 0.0  # the estimated cost of steps still streaming
    run_out: bool = False  # a step was stopped mid-reply at the budget: nothing more runs
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class Allowance:
    """One run's view of its prompt's pool: the pool, its depth, the prompt's output limit."""

    pool: _Pool
    max_tokens: int | None = None  # the top prompt's own limit, which its subagents keep
    depth: int = 0  # 0: the person's prompt; n: a subagent n ``task`` calls down

    @classmethod
    def top(cls, step_limit: int, budget: float | None, max_tokens: int | None) -> Allowance:
        return cls(_Pool(step_limit=step_limit, budget=budget), max_tokens)

    def child_refused(self) -> str | None:
        """Why this run may not start a subagent (too deep, nothing left), else None."""
        if self.depth >= MAX_TASK_DEPTH:
            return (f"Not run: subagents nest at most {MAX_TASK_DEPTH} deep, and this run is "
                    "that deep already. Do this job yourself, here.")
        if self.budget_spent() or self.steps_used_up():
            return "Not run: " + self.stop_note("budget" if self.budget_spent() else "step-limit")
        return None

    def child(self) -> Allowance:
        """The allowance of a subagent this run starts: the same pool, one level deeper."""
        return replace(self, depth=self.depth + 1)

    @property
    def budget(self) -> float | None:
        return self.pool.budget

    @property
    def step_limit(self) -> int:
        return self.pool.step_limit

    @property
    def steps(self) -> int:
        return self.pool.steps

    @property
    def spent(self) -> float:
        return self.pool.spent

    def money_left(self) -> float | None:
        """What is left of the budget after finished and streaming steps; None: no budget."""
        p = self.pool
        return None if p.budget is None else p.budget - p.spent - p.streaming

    def steps_used_up(self) -> bool:
        return self.pool.steps >= self.pool.step_limit

    def budget_spent(self) -> bool:
        p = self.pool
        return p.budget is not None and (p.run_out or p.spent >= p.budget)

    def take_step(self) -> str | None:
        """Take one model step; None when taken, else why not: ``step-limit`` or ``budget``."""
        p = self.pool
        with p.lock:
            if p.steps >= p.step_limit:
                return "step-limit"
            if p.budget is not None and (p.run_out or p.spent + p.streaming >= p.budget):
                return "budget"
            p.steps += 1
            return None

    def stream(self, before: float, now: float) -> float | None:
        """A streaming step's estimate went from ``before`` to ``now`` dollars: counted as
        streaming; returns what is left of the budget then (None: no budget)."""
        p = self.pool
        with p.lock:
            p.streaming += now - before
            return None if p.budget is None else p.budget - p.spent - p.streaming

    def spend(self, cost: float, streamed: float = 0.0, *, run_out: bool = False) -> None:
        """A step finished costing ``cost``; its streaming estimate ``streamed`` is let go;
        ``run_out``: it was stopped at the budget, which its estimate says is spent."""
        p = self.pool
        with p.lock:
            p.spent += cost
            p.streaming -= streamed
            p.run_out = p.run_out or run_out

    def stop_note(self, why: str) -> str:
        """What the person reads (and the model, next time) where the allowance stopped a run."""
        if why == "budget":
            return (f"Stopped: this prompt's budget of ${self.budget:.4f} is spent "
                    f"(${self.spent:.4f} so far, subagents included). Send another prompt "
                    "to continue.")
        return (f"Stopped after {self.steps} model steps (the step limit, subagents included). "
                "Send another prompt to continue, or raise Forge.step_limit.")
