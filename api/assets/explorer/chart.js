// A bar chart of a daily series, drawn as SVG: days without data are shown as zero so the
// time axis is even; each bar carries its day and value (a tooltip, and data attributes that
// tests read), and the same numbers are in a table for screen readers.

import { h, svg } from './dom.js';
import { count } from './format.js';

const WIDTH = 640;
const HEIGHT = 180;
const PAD = { top: 12, right: 8, bottom: 24, left: 40 };
const DAY_MS = 86400000;
const MAX_BAR = 36; // so a few days read as bars, not blocks

// Every day from the first to the last of `points` ({day, value}, oldest first), gaps as 0.
export function everyDay(points) {
  if (!points.length) return [];
  const byDay = new Map(points.map((p) => [p.day, p.value]));
  const out = [];
  const last = Date.parse(`${points[points.length - 1].day}T00:00:00Z`);
  for (let t = Date.parse(`${points[0].day}T00:00:00Z`); t <= last; t += DAY_MS) {
    const day = new Date(t).toISOString().slice(0, 10);
    out.push({ day, value: byDay.get(day) ?? 0 });
  }
  return out;
}

// A figure with the chart of `points`, titled `title`; `unit` names what a value counts.
export function barChart(points, { title, unit, id }) {
  const days = everyDay(points);
  const figure = h('figure', { class: 'chart', id, data: { series: id || '' } });
  figure.append(h('figcaption', { text: title }));
  if (!days.length) {
    figure.append(h('p', { class: 'empty', text: `No ${unit} yet.` }));
    return figure;
  }
  const total = days.reduce((sum, p) => sum + p.value, 0);
  const peak = days.reduce((best, p) => (p.value > best.value ? p : best), days[0]);
  const max = Math.max(peak.value, 1);
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const step = plotWidth / days.length;
  const barWidth = Math.min(MAX_BAR, Math.max(1, step * 0.8));
  const summary = `${title}: ${count(total)} ${unit} over ${days.length} days, most on ${peak.day} (${count(peak.value)})`;
  const chart = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': summary, data: { total } },
    svg('line', { class: 'axis', x1: PAD.left, y1: PAD.top + plotHeight, x2: WIDTH - PAD.right, y2: PAD.top + plotHeight }),
    svg('text', { class: 'tick', x: PAD.left - 6, y: PAD.top + 8, 'text-anchor': 'end', text: count(max) }),
    svg('text', { class: 'tick', x: PAD.left - 6, y: PAD.top + plotHeight, 'text-anchor': 'end', text: '0' }),
    svg('text', { class: 'tick', x: PAD.left, y: HEIGHT - 6, text: days[0].day }),
    days.length > 1 ? svg('text', { class: 'tick', x: WIDTH - PAD.right, y: HEIGHT - 6, 'text-anchor': 'end', text: days[days.length - 1].day }) : null,
    days.map((point, i) => {
      const height = (point.value / max) * plotHeight;
      return svg('rect', {
        class: 'bar', x: (PAD.left + i * step + (step - barWidth) / 2).toFixed(2), y: (PAD.top + plotHeight - height).toFixed(2),
        width: barWidth.toFixed(2), height: height.toFixed(2), data: { day: point.day, value: point.value },
      }, svg('title', { text: `${point.day}: ${count(point.value)} ${unit}` }));
    }));
  figure.append(chart, h('table', { class: 'sr-only' },
    h('caption', { text: title }),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Day' }), h('th', { scope: 'col', text: unit }))),
    h('tbody', {}, days.filter((p) => p.value).map((p) => h('tr', {}, h('td', { text: p.day }), h('td', { text: count(p.value) }))))));
  return figure;
}
