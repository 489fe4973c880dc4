"""Everything drawn or formatted for people: figures, HTML, LaTeX/Markdown tables, the results writer.

The only package folder that imports matplotlib.
"""
