"""The model of the maths: the problem, the arithmetic, the engine and its frozen trace, and their JSON form."""
