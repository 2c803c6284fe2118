alias(
    name = {NAME},
    actual = select({SELECT}),
    tags = ["manual"],
)
