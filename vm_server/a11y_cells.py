"""The cells of a huge table (a spreadsheet) that are on screen, for the accessibility tree.

A sheet's table reports millions of cells; reading them in order would never reach the visible ones,
so the first visible cell is found (under the table's top-left corner, or by a bounded scan) and the
cells are read from there, row by row, while they are showing.
"""
from __future__ import annotations

_TABLE_SCAN = 200  # rows/columns scanned when looking for the first visible cell


def visible_cells(pyatspi, table_acc, allow):
    """Cells of a huge table (a spreadsheet) that are on screen, row by row.

    Args:
        pyatspi: the pyatspi module (for its state and coordinate constants).
        table_acc: the table's accessible.
        allow: called before each cell is asked for; the cells stop when it returns False (the
            walk's node and time limits).
    """
    try:
        table = table_acc.queryTable()
        rows, cols = table.nRows, table.nColumns
    except Exception:  # noqa: BLE001 - NotImplementedError when the interface is absent
        return
    showing = pyatspi.STATE_SHOWING

    def is_showing(cell):
        try:
            return cell is not None and cell.getState().contains(showing)
        except Exception:  # noqa: BLE001
            return False

    start = None
    try:  # the cell under the table's top-left corner is the first visible one
        ext = table_acc.queryComponent().getExtents(pyatspi.XY_SCREEN)
        cell = table_acc.queryComponent().getAccessibleAtPoint(ext[0] + 1, ext[1] + 1, pyatspi.XY_SCREEN)
        if is_showing(cell):
            index = cell.getIndexInParent()
            start = (table.getRowAtIndex(index), table.getColumnAtIndex(index))
    except Exception:  # noqa: BLE001
        start = None
    if start is None:
        for r in range(min(rows, _TABLE_SCAN)):
            for c in range(min(cols, _TABLE_SCAN)):
                if not allow():
                    return
                if is_showing(table.getAccessibleAt(r, c)):
                    start = (r, c)
                    break
            if start is not None:
                break
    if start is None:
        return
    r0, c0 = start
    for r in range(r0, rows):
        any_in_row = False
        for c in range(c0, cols):
            if not allow():
                return
            cell = table.getAccessibleAt(r, c)
            if not is_showing(cell):
                break
            any_in_row = True
            yield cell
        if not any_in_row:
            return
