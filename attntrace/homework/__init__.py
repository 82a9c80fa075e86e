"""Homework: answer sheets read strictly, marked cell by cell at the student's precision, reported and graded."""
