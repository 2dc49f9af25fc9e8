"""The Home on disk: layout, typed records, atomic writes and markers."""
