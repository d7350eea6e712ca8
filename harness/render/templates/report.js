// Sortable tables: a click on a header sorts its table's body by that column, numerically where the cells
// are numbers (a rate cell sorts by its data-sort value), as text otherwise; a second click reverses.
"use strict";
function sortKey(cell) {
  const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
  const number = parseFloat(raw.replace(/[%$,]/g, ""));
  return Number.isNaN(number) ? { text: raw.toLowerCase() } : { number: number };
}
function compareKeys(a, b) {
  if (a.number !== undefined && b.number !== undefined) return a.number - b.number;
  if (a.number !== undefined) return -1;
  if (b.number !== undefined) return 1;
  return a.text.localeCompare(b.text);
}
function sortBy(table, column, header) {
  const body = table.tBodies[0];
  const descending = header.getAttribute("aria-sort") === "ascending";
  for (const th of table.tHead.rows[0].cells) th.removeAttribute("aria-sort");
  header.setAttribute("aria-sort", descending ? "descending" : "ascending");
  const rows = Array.from(body.rows);
  rows.sort((r1, r2) => compareKeys(sortKey(r1.cells[column]), sortKey(r2.cells[column])) * (descending ? -1 : 1));
  for (const row of rows) body.appendChild(row);
}
for (const table of document.querySelectorAll("table.sortable")) {
  Array.from(table.tHead.rows[0].cells).forEach((header, column) => {
    header.addEventListener("click", () => sortBy(table, column, header));
  });
}
document.documentElement.dataset.ready = String(document.querySelectorAll("table.sortable").length);
