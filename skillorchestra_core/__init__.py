"""SkillOrchestra Studio core: handbooks, evidence, competence, routing. Never imports streamlit."""

__version__ = "0.1.0"
