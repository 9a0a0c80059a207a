"""The lint rules, one class each; ``jitscope.lint.registry.RULES`` lists them in code order."""
