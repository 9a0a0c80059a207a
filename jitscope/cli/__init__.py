"""The typer app: one thin module per command."""
