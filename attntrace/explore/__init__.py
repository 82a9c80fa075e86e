"""The explorer (`attntrace explore`, `model --explore`): the state of an exploration (state.py, no screen), its steps
drawn a line at a time (drawing.py), and the Textual app that shows it (app.py, and the screen, panes, keys and dialogs
it is made of)."""
