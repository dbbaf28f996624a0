"""Persistence behind one interface: the embedded SQLite store (PostgreSQL comes with the team server)."""
