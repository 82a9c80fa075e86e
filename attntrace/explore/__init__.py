"""`attntrace explore`: the state of an exploration (state.py, no screen) and the Textual screen that shows it (app.py).
Only app.py imports Textual, and only this command imports app.py."""
