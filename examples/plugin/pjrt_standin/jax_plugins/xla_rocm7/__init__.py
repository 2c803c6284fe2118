"""Stand-in for the jax-rocm7-pjrt wheel until //examples/pjrt lands on main."""


def initialize():
    return "xla_rocm7 stand-in"
