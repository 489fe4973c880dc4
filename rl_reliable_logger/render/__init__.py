"""Everything drawn or formatted for people: figures, HTML, LaTeX/Markdown tables, the report writer (its files go
through the one writer, ``store/``).

The only package folder that imports matplotlib.
"""
