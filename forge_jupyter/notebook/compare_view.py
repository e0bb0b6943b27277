"""A comparison in the notebook: the answers side by side, "Continue here" under each.

The view is a small anywidget whose only code is the click: the page gets HTML the kernel
built (comparison.side_by_side, every model's word escaped), and a click sets ``chosen`` to
that fork's id, which the kernel makes the notebook's current session — as ``%forge use``
does. Where no widget can render (a saved notebook opened elsewhere, nbconvert, GitHub) the
same table shows as plain HTML with the ``%forge use …`` line to type instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from ..comparison import Comparison, side_by_side

ESM = """
function render({ model, el }) {
  const draw = () => {
    el.innerHTML = model.get("html");
    for (const button of el.querySelectorAll("[data-forge-use]")) {
      const id = button.dataset.forgeUse;
      if (model.get("chosen") === id) {
        button.classList.add("forge-compare-chosen");
        button.textContent = "Continuing here \\u2713";
      }
      button.addEventListener("click", () => { model.set("chosen", id); model.save_changes(); });
    }
  };
  draw();
  model.on("change:html", draw);
  model.on("change:chosen", draw);
}
export default { render };
"""


class CompareView(anywidget.AnyWidget):
    _esm = ESM
    html = traitlets.Unicode("").tag(sync=True)
    chosen = traitlets.Unicode("").tag(sync=True)  # the fork the person went on in

    def __init__(self, frame: Comparison, use: Callable[[str], None]) -> None:
        super().__init__(html=side_by_side(frame, buttons=True))
        self._frame = frame
        self._use = use
        self.observe(self._chose, names="chosen")

    def _chose(self, change: dict[str, Any]) -> None:
        if change["new"] in {c.session.id for c in self._frame.runs if c.session is not None}:
            self._use(change["new"])

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        data = super()._repr_mimebundle_(**kwargs)
        bundle, meta = data if isinstance(data, tuple) else (data, {})
        # a front end without the widget manager shows the table as it is
        bundle = {**bundle, "text/html": side_by_side(self._frame),
                  "text/plain": self._frame.to_string(columns=["model", "status", "steps",
                                                               "cost", "session_id"])}
        return bundle, meta
