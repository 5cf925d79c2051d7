"""The mode-skill-agent graph of one handbook version, its filters and renderers (Plotly, pyvis, DOT)."""
