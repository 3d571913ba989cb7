"""Generated starter-repo artifacts: template context and checks of what the templates emit."""
