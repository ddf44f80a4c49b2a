"""The files MemoryStore: memory documents, read indexes and vectors under NIGHTWATCH_HOME."""

from nightwatch.adapters.files.disk import make_private_folder, write_private_text
from nightwatch.adapters.files.folder import FolderDocument, read_folder, write_folder
from nightwatch.adapters.files.store import FileMemoryStore

__all__ = [
    "FileMemoryStore",
    "FolderDocument",
    "make_private_folder",
    "read_folder",
    "write_folder",
    "write_private_text",
]
