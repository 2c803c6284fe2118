"""No module adds transition settings (rules_python's config.add_transition_setting)."""

EXTRA_TRANSITION_SETTINGS = []
