"""The dashboard's routes, one module per area; each exports `ROUTES` (Starlette routes)."""
