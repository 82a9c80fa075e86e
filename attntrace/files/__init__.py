"""Reading problems from JSON, CSV and NumPy files, with errors that point at the cell."""
