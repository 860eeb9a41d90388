#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A flame graph SVG in a real browser: Debian's Chromium, headless,
driven through ChromeDriver with the W3C WebDriver protocol (urllib on
127.0.0.1, standard library only).

  flamegraph_browser.py SVG FOLDED OUTDIR KNOWN_FUNCTION ZOOM_FRAME OUTSIDE_FRAME

FOLDED holds the stacks the SVG was drawn from (report --folded of the same
recording); what the page must show is computed from them here:
- one frame element (g.f) per distinct stack prefix, plus the root "all",
  less those narrower than 0.1 px; each frame's name, and its tooltip
  (<title>) "NAME (N samples, P%)" with N its stacks' counts added up;
- KNOWN_FUNCTION among the names, its label drawn;
- a click on ZOOM_FRAME (the one frame of that name) makes its rectangle
  the whole width, each callee as wide as its share of it, and
  OUTSIDE_FRAME (not under it) hidden; Reset Zoom shows it again;
- Search (the button, then the prompt's text) highlights exactly the
  frames whose names match, and "Matched: P%" is the share of the samples
  in stacks with a match.
Screenshots go to OUTDIR.  Exit 77 when Chromium or ChromeDriver cannot
start here, 1 on a failed check.
"""
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

CHROMIUM = os.environ.get('CHROMIUM', '/usr/bin/chromium')
CHROMEDRIVER = os.environ.get('CHROMEDRIVER', '/usr/bin/chromedriver')
ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'
MIN_WIDTH = 0.1

fails = 0


def fail(msg):
    global fails
    fails += 1
    print('FAIL: ' + msg, file=sys.stderr)


def skip(msg):
    print('SKIP: ' + msg, file=sys.stderr)
    sys.exit(77)


class WebDriver:
    def __init__(self, port):
        self.base = 'http://127.0.0.1:%d' % port
        self.sid = None

    def call(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        if method == 'POST' and data is None:
            data = b'{}'
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read().decode())['value']
        except urllib.error.HTTPError as e:
            raise RuntimeError('%s %s: %s' % (method, path, e.read().decode()[:500]))

    def s(self, method, path, body=None):
        return self.call(method, '/session/%s%s' % (self.sid, path), body)

    def script(self, js, *args):
        return self.s('POST', '/execute/sync', {'script': js, 'args': list(args)})

    def find(self, css):
        v = self.s('POST', '/elements', {'using': 'css selector', 'value': css})
        return [e[ELEMENT] for e in v]


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def implied_frames(folded_path):
    """{prefix tuple: count} of every frame the stacks imply, root () "all"."""
    nodes = {(): 0}
    for line in open(folded_path, encoding='utf-8'):
        line = line.rstrip('\n')
        if not line:
            continue
        stack, count = line.rsplit(' ', 1)
        count = int(count)
        frames = tuple(stack.split(';'))
        nodes[()] += count
        for k in range(1, len(frames) + 1):
            nodes[frames[:k]] = nodes.get(frames[:k], 0) + count
    return nodes


def main():
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    svg, folded, outdir, known, zoom_name, outside_name = sys.argv[1:]
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not os.access(exe, os.X_OK):
            skip('%s is not installed (scripts/install-deps installs it)' % exe)
    os.makedirs(outdir, exist_ok=True)
    nodes = implied_frames(folded)
    total = nodes[()]
    width = None
    head = open(svg, encoding='utf-8').read(4096)
    m = re.search(r'<svg [^>]*width="(\d+)"[^>]*data-pad="(\d+)"', head)
    if not m:
        fail('no <svg width=... data-pad=...> at the start of %s' % svg)
        return 1
    width, pad = int(m.group(1)), int(m.group(2))
    avail = width - 2 * pad
    shown = {p: c for p, c in nodes.items() if c / total * avail >= MIN_WIDTH}

    # A TERM (ctest's timeout) ends the run through the finally below,
    # which stops chromedriver and the browser it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    port = free_port()
    profile = tempfile.mkdtemp(prefix='dsfgchrome.')
    log = open(os.path.join(outdir, 'chromedriver.log'), 'w')
    driver = subprocess.Popen([CHROMEDRIVER, '--port=%d' % port, '--allowed-ips=127.0.0.1'],
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    wd = WebDriver(port)
    try:
        for _ in range(100):
            try:
                if wd.call('GET', '/status', timeout=2).get('ready'):
                    break
            except (OSError, RuntimeError):
                pass
            if driver.poll() is not None:
                skip('chromedriver exited (status %s); see %s' % (driver.returncode, log.name))
            time.sleep(0.1)
        else:
            skip('chromedriver did not get ready on 127.0.0.1:%d' % port)
        args = ['--headless=new', '--disable-gpu', '--disable-dev-shm-usage',
                '--no-first-run', '--user-data-dir=' + profile, '--window-size=1300,1000']
        if os.geteuid() == 0:
            args.append('--no-sandbox')
        try:
            caps = wd.call('POST', '/session', {'capabilities': {'alwaysMatch': {
                'browserName': 'chrome',
                'goog:chromeOptions': {'binary': CHROMIUM, 'args': args}}}}, timeout=60)
        except (OSError, RuntimeError) as e:
            skip('Chromium cannot start here: %s' % e)
        wd.sid = caps['sessionId']
        print('browser: %s %s' % (caps['capabilities'].get('browserName'),
                                  caps['capabilities'].get('browserVersion')))
        check(wd, svg, outdir, shown, total, avail, pad, known, zoom_name, outside_name)
        wd.s('DELETE', '')
    finally:
        try:
            os.killpg(driver.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            driver.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
        log.close()
        shutil.rmtree(profile, ignore_errors=True)
    return 1 if fails else 0


def screenshot(wd, path):
    with open(path, 'wb') as f:
        f.write(base64.b64decode(wd.s('GET', '/screenshot')))
    print('screenshot: %s' % path)


FRAMES_JS = '''
return Array.prototype.map.call(document.querySelectorAll('g.f'), function (g) {
  var r = g.querySelector('rect'), t = g.querySelector('text');
  return {n: g.getAttribute('data-n'), title: g.querySelector('title').textContent,
          d: +g.getAttribute('data-d'), s: +g.getAttribute('data-s'),
          x: +r.getAttribute('x'), w: +r.getAttribute('width'),
          shown: getComputedStyle(g).display !== 'none',
          label: t.textContent, labelPx: t.getComputedTextLength(),
          fill: r.getAttribute('fill'), match: g.classList.contains('match')};
});
'''


def frame_of(frames, name):
    hits = [f for f in frames if f['n'] == name]
    if len(hits) != 1:
        fail('%d frames named %s, want 1' % (len(hits), name))
        return None
    return hits[0]


def check(wd, svg, outdir, shown, total, avail, pad, known, zoom_name, outside_name):
    wd.s('POST', '/url', {'url': 'file://' + os.path.abspath(svg)})
    for _ in range(50):
        if wd.script('return document.readyState') == 'complete':
            break
        time.sleep(0.1)
    if wd.script('return document.documentElement.namespaceURI') != 'http://www.w3.org/2000/svg':
        fail('the page is not an SVG document (not well-formed?)')
        return
    errors = wd.script('return document.querySelectorAll("parsererror").length')
    if errors:
        fail('the SVG has XML errors')
    screenshot(wd, os.path.join(outdir, 'flamegraph.png'))

    # The frames: as many as the stacks imply, with their names and counts.
    frames = wd.script(FRAMES_JS)
    print('frames: %d drawn, %d implied by the stacks' % (len(frames), len(shown)))
    if len(frames) != len(shown):
        fail('%d frame elements, the stacks imply %d' % (len(frames), len(shown)))
    want = {}
    for prefix, count in shown.items():
        name = prefix[-1] if prefix else 'all'
        want.setdefault((name, len(prefix)), []).append(count)
    got = {}
    for f in frames:
        m = re.fullmatch(r'(.*) \((\d+) samples, ([0-9.]+)%\)', f['title'])
        if not m or m.group(1) != f['n']:
            fail('tooltip %r is not "%s (N samples, P%%)"' % (f['title'], f['n']))
            continue
        count = int(m.group(2))
        if abs(float(m.group(3)) - 100.0 * count / total) > 0.005:
            fail('tooltip %r: the share of %d in %d is %.2f%%' %
                 (f['title'], count, total, 100.0 * count / total))
        if abs(f['w'] - avail * count / total) > 0.02:
            fail('%s: width %.2f, want %.2f' % (f['n'], f['w'], avail * count / total))
        got.setdefault((f['n'], f['d']), []).append(count)
    for key in want:
        if sorted(want[key]) != sorted(got.get(key, [])):
            fail('frames %s at depth %d: counts %s, the stacks say %s' %
                 (key[0], key[1], sorted(got.get(key, [])), sorted(want[key])))
    for key in got:
        if key not in want:
            fail('a frame %s at depth %d that no stack has' % key)
    ks = [f for f in frames if f['n'] == known]
    if not ks:
        fail('no frame %s' % known)
    for k in ks:
        if not k['label'] or k['labelPx'] <= 0 or not k['shown']:
            fail('%s: label %r not drawn' % (known, k['label']))
    print('%s: %d frames, labels drawn' % (known, len(ks)))

    # Zoom: a click on the frame, through the driver.
    z = frame_of(frames, zoom_name)
    o = frame_of(frames, outside_name)
    if not z or not o:
        return
    zel = wd.find('g.f[data-n="%s"]' % zoom_name)[0]
    oel = wd.find('g.f[data-n="%s"]' % outside_name)[0]
    if not wd.s('GET', '/element/%s/displayed' % oel):
        fail('%s hidden before any zoom' % outside_name)
    wd.s('POST', '/element/%s/click' % zel)
    after = {(f['n'], f['d'], f['s']): f for f in wd.script(FRAMES_JS)}
    za = after[(z['n'], z['d'], z['s'])]
    if abs(za['w'] - avail) > 0.01 or abs(za['x'] - pad) > 0.01:
        fail('zoomed %s: x %.2f width %.2f, want %d and %d' % (zoom_name, za['x'], za['w'],
                                                              pad, avail))
    rect = wd.s('GET', '/element/%s/rect' % zel)
    if abs(rect['width'] - avail) > 1:
        fail('zoomed %s is drawn %.1f px wide, want %d' % (zoom_name, rect['width'], avail))
    if wd.s('GET', '/element/%s/displayed' % oel):
        fail('%s still shown after zooming into %s' % (outside_name, zoom_name))
    zoom_count = int(re.search(r'\((\d+) samples', z['title']).group(1))
    under = 0
    for f in after.values():
        inside = f['d'] > z['d'] and z['s'] <= f['s'] < z['s'] + zoom_count
        if not inside:
            continue
        under += 1
        count = int(re.search(r'\((\d+) samples', f['title']).group(1))
        if not f['shown'] or abs(f['w'] - avail * count / zoom_count) > 0.02:
            fail('%s under the zoomed %s: width %.2f, want %.2f' %
                 (f['n'], zoom_name, f['w'], avail * count / zoom_count))
    print('zoom: %s fills the width, %d callees rescaled, %s hidden' %
          (zoom_name, under, outside_name))
    screenshot(wd, os.path.join(outdir, 'flamegraph-zoomed.png'))
    wd.s('POST', '/element/%s/click' % wd.find('#unzoom')[0])
    if not wd.s('GET', '/element/%s/displayed' % oel):
        fail('%s not shown again after Reset Zoom' % outside_name)

    # Search: the button asks with a prompt.
    term = '^leaf_'
    wd.s('POST', '/element/%s/click' % wd.find('#search')[0])
    wd.s('POST', '/alert/text', {'text': term})
    wd.s('POST', '/alert/accept')
    frames = wd.script(FRAMES_JS)
    for f in frames:
        hit = f['d'] > 0 and re.search(term, f['n']) is not None
        if f['match'] != hit or (f['fill'] == 'rgb(230,0,230)') != hit:
            fail('search %s: %s highlighted %s, want %s' % (term, f['n'], f['match'], hit))
    matched = 0
    for prefix, count in shown.items():
        # a stack's samples count once, at its outermost match
        if prefix and re.search(term, prefix[-1]) and \
                not any(re.search(term, p) for p in prefix[:-1]):
            matched += count
    text = wd.script('return document.getElementById("matched").textContent')
    want_text = 'Matched: %.1f%%' % (100.0 * matched / total)
    if text != want_text:
        fail('search %s: %r, want %r' % (term, text, want_text))
    print('search: %s highlights %d frames, %s' % (term, sum(f['match'] for f in frames), text))
    screenshot(wd, os.path.join(outdir, 'flamegraph-search.png'))


if __name__ == '__main__':
    sys.exit(main())
