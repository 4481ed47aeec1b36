// MAES-ROS: the page to watch a run (docs/watching.md). Plain JavaScript and a canvas.
//
// It asks the run's server for the scene once (/api/scene: map, robots) and then for frames
// (/api/frame): a live run's latest sample, about ten a second and never faster than it can
// draw, or a finished run's moment chosen with the slider. Everything is in the world frame in
// metres (origin at the map's centre, x to the right, y up). window.maesPage tells tests
// where each robot was drawn.
"use strict";

const $ = (id) => document.getElementById(id);
const POLL_MS = 100; // a live page asks for a frame at most this often

const S = {
  scene: null, frame: null, live: true,
  trailTicks: [], trailXY: [], stride: 0, // per robot: [x0, y0, x1, y1, ...]
  history: [], // [time s, explored %, covered %]
  maps: { seq: 0, explored: null, slam: null }, mapImage: null, mapKey: "",
  selected: -1, mode: "truth",
  show: { paths: true, scans: false, links: true, tags: true, obstacles: true },
  view: { scale: 1, ox: 0, oy: 0 },
  lost: false, playing: false, frameIndex: 0,
};
const page = (window.maesPage = { ready: false, draws: 0, drawn: null, errors: [] });

// ---------------------------------------------------------------- data
function unpack(p) {
  if (!p) return null;
  const bin = atob(p.b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const Type = { f4: Float32Array, i4: Int32Array, u1: Uint8Array }[p.dtype];
  const out = new Type(bytes.buffer);
  out.shape = p.shape;
  return out;
}

async function getJSON(url, options) {
  const res = await fetch(url, options);
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

function setStatus(text, bad) {
  const el = $("status");
  el.textContent = text;
  el.classList.toggle("bad", !!bad);
}

// ---------------------------------------------------------------- start
async function start() {
  try {
    S.scene = await getJSON("api/scene");
  } catch (err) {
    const starting = /not started/.test(err.message);
    setStatus(starting ? "waiting for the run to start…" : `cannot reach the run: ${err.message}`, !starting);
    setTimeout(start, 1000);
    return;
  }
  const sc = S.scene;
  S.live = sc.mode === "live";
  sc.radius = unpack(sc.robots.radius);
  sc.walls = unpack(sc.map.walls);
  sc.lidarAngles = sc.lidars.map((l) => unpack(l.angles));
  $("title").textContent = `${sc.title}${S.live ? " (live)" : " (replay)"}`;
  document.title = `MAES-ROS: ${sc.title}`;
  S.show.scans = !!(sc.show && sc.show.scans) && sc.has.scans;
  S.show.links = !!(sc.show && sc.show.links);
  $("show-scans").checked = S.show.scans;
  $("show-links").checked = S.show.links;
  $("show-scans").disabled = !sc.has.scans;
  if (!sc.has.slam) {
    document.querySelector('input[value="slam"]').disabled = true;
  }
  S.trailXY = sc.robots.names.map(() => []);
  if (!S.live) setUpReplay(sc);
  else setUpLive(sc);
  bindInputs();
  buildLegend();
  new ResizeObserver(() => draw()).observe($("view"));
  if (S.live) poll();
  else showReplayFrame(0);
}

function bindInputs() {
  for (const radio of document.querySelectorAll('input[name="map-mode"]')) {
    radio.addEventListener("change", () => {
      S.mode = radio.value;
      S.mapKey = "";
      buildLegend();
      draw();
    });
  }
  for (const key of Object.keys(S.show)) {
    $(`show-${key}`).addEventListener("change", (e) => {
      S.show[key] = e.target.checked;
      draw();
    });
  }
  $("map").addEventListener("click", (e) => {
    const rect = e.target.getBoundingClientRect();
    select(robotAt(e.clientX - rect.left, e.clientY - rect.top));
  });
}

function setUpLive(sc) {
  $("run-heading").textContent = "Run (live)";
  const canPause = sc.controls.pause, canSpeed = sc.controls.speed;
  $("live-controls").hidden = !canPause && !canSpeed; // direct mode: its own loop steps the run
  $("pause").disabled = !canPause;
  $("speed").disabled = !canSpeed;
  if (!canPause) $("pause").title = "this run cannot be paused from the page";
  $("pause").addEventListener("click", () => {
    const paused = S.frame && S.frame.paused;
    control({ op: paused ? "resume" : "pause" });
  });
  $("speed").addEventListener("change", (e) => control({ op: "speed", rtf: Number(e.target.value) }));
}

async function control(command) {
  try {
    await getJSON("api/control", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(command),
    });
  } catch (err) {
    setStatus(`the run refused: ${err.message}`, true);
  }
}

// ---------------------------------------------------------------- live
async function poll() {
  const began = performance.now();
  const q = new URLSearchParams({
    seq: S.frame ? S.frame.seq : -1,
    trail: S.trailTicks.length ? S.trailTicks[S.trailTicks.length - 1] : -1,
    stride: S.stride,
    hist: S.history.length,
    maps: S.maps.seq,
    scans: S.show.scans ? 1 : 0,
    links: S.show.links ? 1 : 0,
    robot: S.selected,
  });
  try {
    const f = await getJSON(`api/frame?${q}`);
    S.lost = false;
    if (f.poses) takeLiveFrame(f);
    else if (S.frame) S.frame.failed = f.failed;
    showNumbers();
  } catch (err) {
    S.lost = true;
    setStatus("connection lost: the run has ended or stopped", true);
    page.errors.push(String(err));
  }
  const spent = performance.now() - began;
  setTimeout(poll, S.lost ? 1000 : Math.max(POLL_MS - spent, 2 * spent, 10));
}

function takeLiveFrame(f) {
  f.poses = unpack(f.poses);
  f.colliding = unpack(f.colliding);
  f.links = unpack(f.links);
  f.tags = unpack(f.tags);
  f.obstacles = unpack(f.obstacles);
  f.scans = unpack(f.scans);
  const t = f.trail;
  if (t.stride !== S.stride) {
    S.stride = t.stride;
    S.trailTicks = [];
    S.trailXY = S.scene.robots.names.map(() => []);
  }
  const xy = unpack(t.xy), n = S.trailXY.length, k = t.ticks.length;
  for (let i = 0; i < n; i++) {
    const path = S.trailXY[i];
    for (let j = 0; j < k; j++) path.push(xy[(i * k + j) * 2], xy[(i * k + j) * 2 + 1]);
  }
  for (const tick of t.ticks) S.trailTicks.push(tick);
  const rows = unpack(f.history.rows);
  S.history.length = f.history.from;
  for (let j = 0; j < rows.length; j += 3) S.history.push([rows[j], rows[j + 1], rows[j + 2]]);
  if (f.maps) {
    S.maps = { seq: f.maps.seq, explored: unpack(f.maps.explored), slam: unpack(f.maps.slam) };
    S.mapKey = "";
  }
  S.frame = f;
  if (!$("speed").matches(":focus")) $("speed").value = String(f.rtf_cap);
  $("pause").textContent = f.paused ? "Resume" : "Pause";
  draw();
  showRobot();
}

// ---------------------------------------------------------------- replay
function setUpReplay(sc) {
  $("run-heading").textContent = "Run (replay of a finished run)";
  $("replay-controls").hidden = false;
  const slider = $("slider");
  slider.max = String(sc.frames.count - 1);
  slider.addEventListener("input", () => {
    S.playing = false;
    $("play").textContent = "Play";
    showReplayFrame(Number(slider.value));
  });
  $("play").addEventListener("click", () => {
    S.playing = !S.playing;
    $("play").textContent = S.playing ? "Pause" : "Play";
    if (S.playing) {
      if (S.frameIndex >= sc.frames.count - 1) showReplayFrame(0);
      play(performance.now(), sc.frames.times[S.frameIndex]);
    }
  });
  S.trailTicks = sc.trail.ticks;
  const xy = unpack(sc.trail.xy), n = sc.robots.names.length, k = sc.trail.ticks.length;
  S.trailXY = sc.robots.names.map((_, i) => Array.from(xy.subarray(i * k * 2, (i + 1) * k * 2)));
  const rows = unpack(sc.history);
  for (let j = 0; j < rows.length; j += 3) S.history.push([rows[j], rows[j + 1], rows[j + 2]]);
  void n;
}

function play(wall0, time0) {
  if (!S.playing) return;
  const sc = S.scene, speed = Number($("replay-speed").value);
  const target = time0 + ((performance.now() - wall0) / 1000) * speed;
  const times = sc.frames.times;
  let k = S.frameIndex;
  while (k < times.length - 1 && times[k + 1] <= target) k++;
  const next = () => requestAnimationFrame(() => play(wall0, time0));
  if (k !== S.frameIndex) showReplayFrame(k).then(next);
  else if (k >= times.length - 1) {
    S.playing = false;
    $("play").textContent = "Play";
  } else next();
}

async function showReplayFrame(k) {
  S.frameIndex = k;
  $("slider").value = String(k);
  try {
    const f = await getJSON(`api/frame?at=${k}&robot=${S.selected}`);
    if (k !== S.frameIndex) return; // the slider moved on
    f.poses = unpack(f.poses);
    f.colliding = unpack(f.colliding);
    f.links = unpack(f.links);
    f.tags = unpack(f.tags);
    f.obstacles = unpack(f.obstacles);
    f.scans = null;
    if (f.maps) {
      S.maps = { seq: f.maps.seq, explored: unpack(f.maps.explored), slam: null };
      S.mapKey = "";
    }
    S.frame = f;
    showNumbers();
    draw();
    showRobot();
  } catch (err) {
    setStatus(`cannot read the replay: ${err.message}`, true);
  }
}

// ---------------------------------------------------------------- numbers and status
function fmt(x, digits) {
  return x === null || x === undefined || Number.isNaN(x) ? "–" : Number(x).toFixed(digits);
}

function showNumbers() {
  const f = S.frame;
  if (!f) return;
  const sc = S.scene, end = sc.end;
  $("n-tick").textContent = `${f.tick}`;
  $("n-time").textContent = `${fmt(f.time, 1)} s`;
  if (S.live) {
    const cap = f.rtf_cap > 0 ? `cap ${f.rtf_cap}×` : "no cap";
    // (a direct-mode run has no cap of its own: as fast as its loop goes)
    $("n-rtf").textContent = `${fmt(f.rtf, 2)}× (${cap})`;
  } else {
    $("n-rtf").textContent = "– (a replay)";
  }
  const goal = end.exploration_percent !== null ? ` of ${end.exploration_percent} % goal` : "";
  $("n-explored").textContent = `${fmt(f.explored, 1)} %${goal}`;
  $("n-covered").textContent = f.covered === null ? "not recorded" : `${fmt(f.covered, 1)} %`;
  if (S.lost) return;
  let text;
  if (f.failed) text = `the page stopped following the run (it goes on): ${f.failed}`;
  else if (!S.live) text = `replay: frame ${S.frameIndex + 1} of ${sc.frames.count}`;
  else if (f.finished) text = `finished: ${f.end_reason}`;
  else if (f.paused) text = "paused";
  else if (!f.started) text = "waiting for the controllers to start";
  else text = `running, ${fmt(f.rtf, 2)}× real time`;
  setStatus(`tick ${f.tick} · ${fmt(f.time, 1)} s · ${text}`, !!f.failed);
  plot();
}

// ---------------------------------------------------------------- drawing
function rgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

const SLAM_COLOURS = { 0: "#c9ccd6", 1: "#ffffff", 2: "#575757" };

function mapImage() {
  const sc = S.scene, m = sc.map;
  const key = `${S.mode}:${S.maps.seq}`;
  if (S.mapImage && S.mapKey === key) return S.mapImage;
  const img = document.createElement("canvas");
  img.width = m.width;
  img.height = m.height;
  const ctx = img.getContext("2d");
  const data = ctx.createImageData(m.width, m.height);
  const c = sc.colours;
  const wall = rgb(c.wall), never = rgb(c.never), explored = rgb(c.explored);
  const slamRGB = [0, 1, 2].map((k) => rgb(SLAM_COLOURS[k]));
  for (let row = 0; row < m.height; row++) {
    const top = m.height - 1 - row; // row 0 of the grid is the bottom
    for (let col = 0; col < m.width; col++) {
      const k = row * m.width + col;
      let px;
      if (S.mode === "slam") px = S.maps.slam ? slamRGB[Math.min(S.maps.slam[k], 2)] : slamRGB[0];
      else if (sc.walls[k]) px = wall;
      else px = !S.maps.explored || S.maps.explored[k] ? explored : never;
      const o = (top * m.width + col) * 4;
      data.data[o] = px[0];
      data.data[o + 1] = px[1];
      data.data[o + 2] = px[2];
      data.data[o + 3] = 255;
    }
  }
  ctx.putImageData(data, 0, 0);
  S.mapImage = img;
  S.mapKey = key;
  return img;
}

const BAR_H = 34; // the strip under the map that holds the scale bar

function fitView(cw, ch) {
  const m = S.scene.map, pad = 10, mh = ch - BAR_H;
  const w = m.width * m.tile, h = m.height * m.tile;
  const scale = Math.max(1e-6, Math.min((cw - 2 * pad) / w, (mh - 2 * pad) / h));
  S.view = {
    scale,
    ox: (cw - w * scale) / 2 - m.origin[0] * scale,
    oy: (mh + h * scale) / 2 + m.origin[1] * scale,
  };
}

const toPx = (x, y) => [S.view.ox + x * S.view.scale, S.view.oy - y * S.view.scale];

function draw() {
  const sc = S.scene, f = S.frame, canvas = $("map");
  if (!sc) return;
  const dpr = window.devicePixelRatio || 1;
  const cw = canvas.clientWidth, ch = canvas.clientHeight;
  if (canvas.width !== Math.round(cw * dpr) || canvas.height !== Math.round(ch * dpr)) {
    canvas.width = Math.round(cw * dpr);
    canvas.height = Math.round(ch * dpr);
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, cw, ch);
  fitView(cw, ch);
  const m = sc.map, s = S.view.scale;
  const [left, top] = toPx(m.origin[0], m.origin[1] + m.height * m.tile);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(mapImage(), left, top, m.width * m.tile * s, m.height * m.tile * s);
  ctx.strokeStyle = "#888";
  ctx.lineWidth = 1;
  ctx.strokeRect(left, top, m.width * m.tile * s, m.height * m.tile * s);
  drawScaleBar(ctx, cw, ch);
  if (!f) return;
  if (S.show.paths) drawPaths(ctx, f);
  if (S.show.scans && f.scans) drawScans(ctx, f);
  if (S.show.obstacles && f.obstacles) drawObstacles(ctx, f.obstacles);
  if (S.show.tags && f.tags) drawTags(ctx, f.tags);
  if (S.show.links && f.links) drawLinks(ctx, f);
  drawRobots(ctx, f);
  page.draws += 1;
  page.ready = true;
  page.frame = { tick: f.tick, time: f.time, seq: f.seq, index: S.frameIndex };
  page.transform = { ...S.view };
}

function drawPaths(ctx, f) {
  const colours = S.scene.robots.colour;
  let upto = S.trailTicks.length;
  if (!S.live) { // a replay: the paths up to the frame's tick
    upto = 0;
    while (upto < S.trailTicks.length && S.trailTicks[upto] <= f.tick) upto++;
  }
  ctx.lineWidth = 1.3;
  ctx.globalAlpha = 0.75;
  S.trailXY.forEach((path, i) => {
    const k = Math.min(upto, path.length / 2);
    if (k < 2) return;
    ctx.strokeStyle = colours[i];
    ctx.beginPath();
    for (let j = 0; j < k; j++) {
      const [px, py] = toPx(path[2 * j], path[2 * j + 1]);
      if (Number.isNaN(px)) continue;
      if (j === 0) ctx.moveTo(px, py);
      else ctx.lineTo(px, py);
    }
    ctx.stroke();
  });
  ctx.globalAlpha = 1;
}

function drawScans(ctx, f) {
  const sc = S.scene, colours = sc.robots.colour;
  ctx.lineWidth = 0.7;
  ctx.globalAlpha = 0.35;
  let at = 0;
  for (let i = 0; i < colours.length; i++) {
    const angles = sc.lidarAngles[sc.robots.lidar[i]];
    const x = f.poses[3 * i], y = f.poses[3 * i + 1], th = f.poses[3 * i + 2];
    const [px, py] = toPx(x, y);
    ctx.strokeStyle = colours[i];
    ctx.beginPath();
    for (let k = 0; k < angles.length; k++) {
      const r = f.scans[at + k], a = th + angles[k];
      const [qx, qy] = toPx(x + r * Math.cos(a), y + r * Math.sin(a));
      ctx.moveTo(px, py);
      ctx.lineTo(qx, qy);
    }
    ctx.stroke();
    at += angles.length;
  }
  ctx.globalAlpha = 1;
}

function drawObstacles(ctx, obs) {
  const c = S.scene.colours, s = S.view.scale;
  ctx.fillStyle = c.obstacle;
  ctx.strokeStyle = "#ffffff";
  ctx.lineWidth = 1.2;
  for (let k = 0; k < obs.length; k += 5) {
    const [px, py] = toPx(obs[k + 1], obs[k + 2]);
    ctx.beginPath();
    if (obs[k] === 0) ctx.arc(px, py, Math.max(obs[k + 3] * s, 2), 0, 2 * Math.PI);
    else ctx.rect(px - obs[k + 3] * s, py - obs[k + 4] * s, 2 * obs[k + 3] * s, 2 * obs[k + 4] * s);
    ctx.fill();
    ctx.stroke();
  }
}

function drawTags(ctx, tags) {
  ctx.fillStyle = S.scene.colours.tag;
  for (let k = 0; k < tags.length; k += 2) {
    const [px, py] = toPx(tags[k], tags[k + 1]);
    ctx.beginPath();
    ctx.moveTo(px, py - 3.5);
    ctx.lineTo(px + 3.5, py);
    ctx.lineTo(px, py + 3.5);
    ctx.lineTo(px - 3.5, py);
    ctx.fill();
  }
}

function drawLinks(ctx, f) {
  ctx.strokeStyle = S.scene.colours.broadcast;
  ctx.lineWidth = 1.4;
  const many = f.links.length > 400; // many links: faint and solid (dashes cost the most)
  ctx.globalAlpha = many ? 0.3 : 0.9;
  ctx.setLineDash(many ? [] : [5, 4]);
  ctx.beginPath();
  for (let k = 0; k < f.links.length; k += 2) {
    const a = f.links[k], b = f.links[k + 1];
    const [ax, ay] = toPx(f.poses[3 * a], f.poses[3 * a + 1]);
    const [bx, by] = toPx(f.poses[3 * b], f.poses[3 * b + 1]);
    ctx.moveTo(ax, ay);
    ctx.lineTo(bx, by);
  }
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.globalAlpha = 1;
}

function drawRobots(ctx, f) {
  const sc = S.scene, n = sc.robots.names.length, s = S.view.scale;
  const drawn = [];
  const labels = n <= 30;
  ctx.font = "11px system-ui, sans-serif";
  for (let i = 0; i < n; i++) {
    const x = f.poses[3 * i], y = f.poses[3 * i + 1], th = f.poses[3 * i + 2];
    if (Number.isNaN(x)) {
      drawn.push(null);
      continue;
    }
    const [px, py] = toPx(x, y);
    const r = Math.max(sc.radius[i] * s, 3);
    ctx.beginPath();
    ctx.arc(px, py, r, 0, 2 * Math.PI);
    ctx.fillStyle = sc.robots.colour[i];
    ctx.fill();
    ctx.lineWidth = f.colliding && f.colliding[i] ? 2.5 : 1;
    ctx.strokeStyle = f.colliding && f.colliding[i] ? "#e00000" : "#000000";
    ctx.stroke();
    if (!Number.isNaN(th)) { // heading: a line from the centre to the rim
      ctx.beginPath();
      ctx.moveTo(px, py);
      ctx.lineTo(px + r * Math.cos(th), py - r * Math.sin(th));
      ctx.lineWidth = Math.max(1.5, r / 4);
      ctx.strokeStyle = "#000000";
      ctx.stroke();
    }
    if (labels) {
      ctx.fillStyle = "#000";
      ctx.fillText(String(i), px + r + 2, py - r - 1);
    }
    drawn.push([px, py, r]);
  }
  const sel = drawn[S.selected];
  if (sel) { // the clicked robot over the others: a black and white ring, found in any crowd
    const [px, py, r] = sel;
    for (const [width, colour] of [[5, "#000000"], [2, "#ffffff"]]) {
      ctx.beginPath();
      ctx.arc(px, py, r + 4, 0, 2 * Math.PI);
      ctx.lineWidth = width;
      ctx.strokeStyle = colour;
      ctx.stroke();
    }
  }
  page.drawn = { tick: f.tick, index: S.frameIndex, robots: drawn };
}

function niceLength(metres) {
  const p = Math.pow(10, Math.floor(Math.log10(metres)));
  for (const k of [5, 2, 1]) if (k * p <= metres) return k * p;
  return p;
}

function drawScaleBar(ctx, cw, ch) {
  const s = S.view.scale, len = niceLength((cw * 0.18) / s), px = len * s;
  const x0 = Math.max(16, S.view.ox + S.scene.map.origin[0] * s), y0 = ch - 8;
  ctx.font = "12px system-ui, sans-serif";
  const axes = "x → , y ↑ in metres, origin at the map's centre";
  ctx.strokeStyle = "#000";
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(x0, y0 - 6);
  ctx.lineTo(x0, y0);
  ctx.lineTo(x0 + px, y0);
  ctx.lineTo(x0 + px, y0 - 6);
  ctx.stroke();
  ctx.fillStyle = "#000";
  ctx.fillText(`${len} m`, x0 + px / 2 - 10, y0 - 10);
  ctx.fillText(axes, x0 + px + 14, y0 - 2);
}

// ---------------------------------------------------------------- robot panel
function robotAt(x, y) {
  const d = page.drawn;
  if (!d) return -1;
  let best = -1, bestD = Infinity;
  d.robots.forEach((p, i) => {
    if (!p) return;
    const dist = Math.hypot(p[0] - x, p[1] - y);
    if (dist <= Math.max(p[2] + 4, 9) && dist < bestD) {
      best = i;
      bestD = dist;
    }
  });
  return best;
}

function select(i) {
  S.selected = i;
  draw();
  showRobot();
  if (!S.live && S.frame) showReplayFrame(S.frameIndex);
}

function esc(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

function listText(items, show) {
  if (!items || !items.length) return "none";
  return items.map((it) => (typeof it === "string" ? it : show(it))).map(esc).join("<br>");
}

function showRobot() {
  const i = S.selected, sc = S.scene, f = S.frame, box = $("robot-info");
  if (i < 0 || !f) {
    $("robot-heading").textContent = "Robot";
    box.innerHTML = '<p class="hint">Click a robot on the map.</p>';
    return;
  }
  const name = sc.robots.names[i];
  $("robot-heading").textContent = `Robot: ${name}`;
  const x = f.poses[3 * i], y = f.poses[3 * i + 1], th = f.poses[3 * i + 2];
  const kind = sc.robots.types[i] ? `type ${esc(sc.robots.types[i])}, ` : "";
  const rows = [
    ["robot", `<span class="swatch" style="background:${sc.robots.colour[i]}"></span>${esc(name)}: ${kind}radius ${fmt(sc.radius[i], 2)} m`],
    ["true pose", `x ${fmt(x, 2)}, y ${fmt(y, 2)} m, ${fmt((th * 180) / Math.PI, 0)}°`],
  ];
  const nav = f.nav && f.nav[String(i)];
  rows.push(["navigation", esc(nav || (S.live ? "not heard yet" : "not kept in replays"))]);
  const st = f.states && f.states[String(i)];
  if (st) {
    rows.push(['<b>maes_state</b>', `<span class="hint">what its controller gets</span>`]);
    rows.push(["tick, status", `${st.tick}, ${esc(st.status)}`], ["colliding", st.colliding]);
    rows.push(["position", `x ${fmt(st.position.x, 2)}, y ${fmt(st.position.y, 2)} m (SLAM's)`]);
    rows.push(["heading", `${fmt((st.heading * 180) / Math.PI, 1)}°`], ["robot_type", esc(st.robot_type)]);
    rows.push(["incoming_broadcast_msgs", listText(st.incoming_broadcast_msgs, (b) => `${b.sender}: ${b.msg}`)]);
    rows.push(["tags_nearby", listText(st.tags_nearby, (t) => `${t.sender} @ (${fmt(t.pos.x, 1)}, ${fmt(t.pos.y, 1)}) tick ${t.tick}: ${t.msg}`)]);
    rows.push(["nearby_robots", listText(st.nearby_robots, (r) => `robot${r.id} @ (${fmt(r.pos.x, 1)}, ${fmt(r.pos.y, 1)})`)]);
  } else {
    rows.push(["maes_state", S.live ? "arriving…" : "not kept in replays"]);
  }
  box.innerHTML = `<table>${rows.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join("")}</table>`;
}

// ---------------------------------------------------------------- legend and plot
function swatch(drawFn) {
  const c = document.createElement("canvas");
  c.width = 22;
  c.height = 14;
  drawFn(c.getContext("2d"));
  return c;
}

function buildLegend() {
  const sc = S.scene, c = sc.colours, ul = $("legend");
  ul.innerHTML = "";
  const box = (colour) => (g) => {
    g.fillStyle = colour;
    g.fillRect(2, 1, 18, 12);
    g.strokeStyle = "#999";
    g.strokeRect(2.5, 1.5, 17, 11);
  };
  const items = S.mode === "slam"
    ? [[box(SLAM_COLOURS[2]), "occupied (any robot's SLAM)"], [box(SLAM_COLOURS[1]), "free (SLAM)"], [box(SLAM_COLOURS[0]), "unknown to every robot"]]
    : [[box(c.wall), "wall"], [box(c.explored), "explored"], [box(c.never), "not yet explored"]];
  items.push(
    [(g) => { g.beginPath(); g.arc(11, 7, 5.5, 0, 7); g.fillStyle = sc.robots.colour[0]; g.fill(); g.strokeStyle = "#000"; g.stroke(); g.beginPath(); g.moveTo(11, 7); g.lineTo(16.5, 7); g.lineWidth = 2; g.stroke(); }, "robot (to scale), heading"],
    [(g) => { g.strokeStyle = sc.robots.colour[0]; g.lineWidth = 1.5; g.beginPath(); g.moveTo(1, 11); g.lineTo(8, 4); g.lineTo(21, 8); g.stroke(); }, "path"],
    [(g) => { g.strokeStyle = sc.robots.colour[0]; g.globalAlpha = 0.6; g.beginPath(); for (const a of [-0.5, 0, 0.5]) { g.moveTo(2, 7); g.lineTo(2 + 19 * Math.cos(a), 7 + 19 * Math.sin(a)); } g.stroke(); }, "scan rays"],
    [(g) => { g.strokeStyle = c.broadcast; g.setLineDash([4, 3]); g.lineWidth = 1.5; g.beginPath(); g.moveTo(1, 7); g.lineTo(21, 7); g.stroke(); }, S.live ? "broadcast link (in range)" : "broadcast (sender – receiver)"],
    [(g) => { g.fillStyle = c.tag; g.beginPath(); g.moveTo(11, 3); g.lineTo(15, 7); g.lineTo(11, 11); g.lineTo(7, 7); g.fill(); }, "tag"],
    [(g) => { g.fillStyle = c.obstacle; g.fillRect(4, 2, 14, 10); g.strokeStyle = "#fff"; g.strokeRect(4.5, 2.5, 13, 9); }, "moving obstacle"],
    [(g) => { g.beginPath(); g.arc(11, 7, 5, 0, 7); g.lineWidth = 2.5; g.strokeStyle = "#e00000"; g.stroke(); }, "colliding robot"],
    [(g) => { for (const [w, col] of [[4, "#000000"], [1.5, "#ffffff"]]) { g.beginPath(); g.arc(11, 7, 5, 0, 7); g.lineWidth = w; g.strokeStyle = col; g.stroke(); } }, "clicked robot"],
  );
  for (const [fn, label] of items) {
    const li = document.createElement("li");
    li.appendChild(swatch(fn));
    li.appendChild(document.createTextNode(label));
    ul.appendChild(li);
  }
}

const PLOT = { explored: "#1565c0", covered: "#e65100" };

function plot() {
  const canvas = $("plot"), ctx = canvas.getContext("2d");
  const dpr = window.devicePixelRatio || 1, W = 340, H = 190;
  if (canvas.width !== W * dpr) {
    canvas.width = W * dpr;
    canvas.height = H * dpr;
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, H);
  const L = 40, R = 10, T = 8, B = 34, pw = W - L - R, ph = H - T - B;
  const rows = S.history.slice();
  const f = S.frame;
  if (S.live && f && (!rows.length || rows[rows.length - 1][0] < f.time)) rows.push([f.time, f.explored, f.covered]);
  const tEnd = !S.live && S.scene.frames ? S.scene.frames.times[S.scene.frames.count - 1] : 0;
  const tMax = Math.max(1, tEnd, rows.length ? rows[rows.length - 1][0] : 0);
  const X = (t) => L + (t / tMax) * pw, Y = (p) => T + ph - (p / 100) * ph;
  ctx.strokeStyle = "#ccc";
  ctx.fillStyle = "#333";
  ctx.font = "11px system-ui, sans-serif";
  ctx.lineWidth = 1;
  for (const p of [0, 25, 50, 75, 100]) {
    ctx.beginPath();
    ctx.moveTo(L, Y(p));
    ctx.lineTo(L + pw, Y(p));
    ctx.stroke();
    ctx.fillText(`${p}`, L - 24, Y(p) + 4);
  }
  const step = niceLength(tMax / 3);
  for (let t = 0; t <= tMax + 1e-9; t += step) ctx.fillText(`${Math.round(t)}`, X(t) - 6, T + ph + 14);
  ctx.fillText("sim time (s)", L + pw / 2 - 30, H - 4);
  ctx.save();
  ctx.translate(11, T + ph / 2 + 6);
  ctx.rotate(-Math.PI / 2);
  ctx.fillText("%", 0, 0);
  ctx.restore();
  ctx.strokeStyle = "#444";
  ctx.strokeRect(L, T, pw, ph);
  const goal = S.scene.end.exploration_percent;
  if (goal !== null && goal !== undefined) {
    ctx.setLineDash([4, 3]);
    ctx.strokeStyle = PLOT.explored;
    ctx.beginPath();
    ctx.moveTo(L, Y(goal));
    ctx.lineTo(L + pw, Y(goal));
    ctx.stroke();
    ctx.setLineDash([]);
  }
  for (const [col, key] of [[1, "explored"], [2, "covered"]]) {
    ctx.strokeStyle = PLOT[key];
    ctx.lineWidth = 2;
    ctx.beginPath();
    let started = false;
    for (const row of rows) {
      if (row[col] === null || Number.isNaN(row[col])) continue;
      if (!started) ctx.moveTo(X(row[0]), Y(row[col]));
      else ctx.lineTo(X(row[0]), Y(row[col]));
      started = true;
    }
    ctx.stroke();
  }
  if (!S.live && f) { // where the slider is
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(X(f.time), T);
    ctx.lineTo(X(f.time), T + ph);
    ctx.stroke();
  }
  const legend = [["explored", PLOT.explored, []], ["covered", PLOT.covered, []]];
  if (goal !== null && goal !== undefined) legend.push([`exploration goal ${goal} %`, PLOT.explored, [4, 3]]);
  legend.forEach(([label, colour, dash], k) => {
    const y = T + 12 + k * 14;
    ctx.fillStyle = "rgba(255,255,255,0.85)";
    ctx.fillRect(L + 4, y - 9, 150, 14);
    ctx.strokeStyle = colour;
    ctx.lineWidth = 2;
    ctx.setLineDash(dash);
    ctx.beginPath();
    ctx.moveTo(L + 8, y - 3);
    ctx.lineTo(L + 26, y - 3);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = "#222";
    ctx.fillText(label, L + 31, y + 1);
  });
}

start();
