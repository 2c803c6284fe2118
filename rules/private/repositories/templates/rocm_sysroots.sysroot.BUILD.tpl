config_setting(
    name = {SETTING},
    flag_values = {{FLAG}: {NAME}},
)
