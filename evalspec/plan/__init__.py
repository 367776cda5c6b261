"""The evaluation plan: model, YAML loading with positions, validation, lock."""

from evalspec.plan.model import Plan

__all__ = ["Plan"]
