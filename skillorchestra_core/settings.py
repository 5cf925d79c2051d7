"""One settings object, read from the environment (prefix SKILLORCHESTRA_) or a .env file."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = PROJECT_ROOT / "data"
DEFAULT_DB_PATH = DATA_DIR / "skillorchestra.db"


def default_db_url() -> str:
    # Absolute, so the app, the CLI and the tests agree whatever the working directory.
    return f"sqlite:///{DEFAULT_DB_PATH}"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLORCHESTRA_", env_file=".env", extra="ignore")

    db_url: str = ""
    # LLM layer: "offline" (deterministic stand-ins, the default) or "litellm" (any litellm model string).
    llm_backend: Literal["offline", "litellm"] = "offline"
    llm_model: str = "openai/gpt-4o-mini"
    llm_api_base: str | None = None
    llm_api_key: str | None = None
    llm_timeout_s: float = 60.0
    llm_retries: int = 2
    # Competence prior: "hierarchical" (centred on the agent's pooled rate in the mode) or "flat" Beta(1,1).
    prior: Literal["hierarchical", "flat"] = "hierarchical"
    prior_strength: float = 2.0
    credible_level: float = 0.95
    default_lambda: float = 0.1
    # The cost a router weighs: "skill" (the query's activation-weighted per-skill costs) or "mode" (one per agent).
    cost_scope: Literal["skill", "mode"] = "skill"

    @property
    def database_url(self) -> str:
        return self.db_url or default_db_url()


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
