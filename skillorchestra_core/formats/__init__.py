"""Import and export formats: outcomes long format, LLMRouter outcome set, SkillOrchestra exploration files,
the canonical SkillOrchestra handbook JSON, its RSL and stage-router exports, and a JSON dump of one version."""
