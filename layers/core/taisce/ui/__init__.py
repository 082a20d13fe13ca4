"""The memory explorer: a static web page served at /ui (functions/ui) that talks to the
public API with a credential the person pastes in. See static/README.md."""
