import this_dependency_does_not_exist  # noqa: F401
