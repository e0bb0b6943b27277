"""What a prompt points at (issue 27, "Point at things"): ``grammar`` reads the mentions of a
prompt, ``resolve`` turns each into an attachment the model reads with it."""
