"""Refinement: statistics detect split and merge candidates, an LLM (or the offline proposer) proposes revised skills,
reviewers decide; an approved decision becomes a new immutable handbook version with an audit row."""
