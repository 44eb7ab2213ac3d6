"""Expected failures as one clear line on the page (never a traceback)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from eduart_core.errors import UserError
from eduart_core.text import plain
from eduart_core.views import EmptySelection, ItemLevelUnavailable, StoreError, StoreLockedError, StoreUnavailableError


@contextmanager
def guard() -> Iterator[None]:
    """Turn the expected failures into one clear line and stop the page (never a traceback)."""
    try:
        yield
    except ItemLevelUnavailable as exc:
        st.info(f"{plain(exc)} Switch the dataset in the sidebar to see this page.")
        st.stop()
    except EmptySelection as exc:
        st.warning(plain(exc))
        st.stop()
    except StoreUnavailableError as exc:  # the database server is away (restarting): its own line
        st.error(f"{plain(exc)}. Reload the page in a moment.")
        st.stop()
    except StoreLockedError:
        st.error("The store is busy (another process is writing to it). Wait a moment and reload the page.")
        st.stop()
    except StoreError as exc:
        st.error(f"Cannot read the store: {plain(exc)}")
        st.stop()
    except UserError as exc:
        st.warning(plain(exc))
        st.stop()
