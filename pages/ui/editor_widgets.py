"""The review and exam editors drawn as widgets (`extraction.editors.Editor` controls) and their values."""
from __future__ import annotations

import streamlit as st

from eduart_core.text import plain


def draw_control(container, control, key: str, row_label: str | None = None) -> None:
    """One primitive control of an `extraction.editors.Editor` (labels are data: shown as text)."""
    label = ("≠ " if control.marked else "") + plain(control.label)
    if row_label:
        label = f"{plain(row_label)}: {label}"
    if control.kind == "text":
        container.text_input(label, value=control.value, key=key)
    elif control.kind == "textarea":
        container.text_area(label, value=control.value, key=key, height=120)
    elif control.kind in ("radio", "select"):
        options = list(control.options)
        index = options.index(control.value) if control.value in options else None
        widget = container.radio if control.kind == "radio" else container.selectbox
        widget(label, options, index=index, key=key)
    elif control.kind == "checkbox":
        container.checkbox(label, value=bool(control.value), key=key)
    elif control.kind == "toggle":
        container.toggle(label, value=bool(control.value), key=key)
    elif control.kind == "number":
        container.number_input(label, value=control.value, key=key, format="%g")


def draw_editor(editor, prefix: str) -> None:
    """Every control of an editor, rows side by side; widget keys are ``prefix + control.key``."""
    groups: dict[str | None, list] = {}
    for control in editor.controls:
        groups.setdefault(control.row, []).append(control)
    for row_label, controls in groups.items():
        if row_label is None:
            for control in controls:
                draw_control(st, control, prefix + control.key)
        else:
            cols = st.columns([1] + [3] * (len(controls) - 1) if len(controls) > 1 else [1])
            for col, control in zip(cols, controls):
                draw_control(col, control, prefix + control.key, row_label if control is controls[0] else None)


def editor_values(editor, prefix: str) -> dict:
    """The values the person set in an editor drawn with `draw_editor` (by control key)."""
    return {c.key: st.session_state[prefix + c.key] for c in editor.controls if prefix + c.key in st.session_state}
