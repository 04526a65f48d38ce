#!/usr/bin/python3
"""The benchmark's RTSP camera: serves an H.264 mp4 without re-encoding (GStreamer's RTSP
server, like test/helpers/rtsp-server.py, once through, no loop) and prints, for every frame
it sends, when it sent it: `{"media": <id>, "pts": <ns>, "at": <ms since epoch>}`, so a frame
seen anywhere later can be dated from its source. Every client gets a pipeline of its own
(`{"media": <id>, "start": <ms>}` when it starts), as a camera serves each client on its own:
a shared file-backed pipeline stops every client's frames for seconds when another joins.

usage: marker-rtsp-server.py <file.mp4> <port> <mount>
Prints "ready" on stdout once it listens.
"""
import itertools
import json
import os
import sys
import threading
import time

import gi

gi.require_version('Gst', '1.0')
gi.require_version('GstRtspServer', '1.0')
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


media_ids = itertools.count(1)


# Each pipeline sends from a streaming thread of its own: one whole line at a time.
output = threading.Lock()


def emit(line):
    try:
        with output:
            sys.stdout.write(json.dumps(line) + '\n')
            sys.stdout.flush()
    except BrokenPipeError:
        # The benchmark reading these lines is gone (killed): so is its camera.
        os._exit(0)


def on_configure(_factory, media):
    pay = media.get_element().get_by_name('pay0')
    media_id = next(media_ids)
    emit({'media': media_id, 'start': time.time() * 1000})

    def sent(_pad, info):
        buffer = info.get_buffer()
        if buffer.pts != Gst.CLOCK_TIME_NONE:
            emit({'media': media_id, 'pts': buffer.pts, 'at': time.time() * 1000})
        return Gst.PadProbeReturn.OK

    pay.get_static_pad('sink').add_probe(Gst.PadProbeType.BUFFER, sent)


def main():
    file, port, mount = sys.argv[1], sys.argv[2], sys.argv[3]
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address('127.0.0.1')
    server.set_service(port)
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(f'( filesrc location="{file}" ! qtdemux ! queue ! rtph264pay name=pay0 pt=96 config-interval=-1 )')
    factory.set_shared(False)
    factory.connect('media-configure', on_configure)
    server.get_mount_points().add_factory(mount, factory)
    if server.attach(None) == 0:
        print('could not listen', flush=True)
        sys.exit(1)
    print('ready', flush=True)
    GLib.MainLoop().run()


if __name__ == '__main__':
    main()
