"""The notebook as the agent reads it: its cells, their outputs summarized for a model, within
stated budgets (docs/notebook-context.md).

``outputs`` turns one saved output into bounded text (HTML to text, never rendered; images
noted), ``document`` reads the cells from the live page, the saved ``.ipynb`` and the kernel's
own history, ``run_log`` keeps what ran in this kernel and how it ended, ``render`` addresses
and prints cells for the ``notebook_read`` tool, and ``note`` writes the small context note each
prompt carries; ``edit`` sends the cell tools' changes to the page and ``review`` records the
person's decisions on them. Everything here is untrusted input: bounded before it is parsed, scrubbed of
secrets before it is cut, and never executed.
"""
