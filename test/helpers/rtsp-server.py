#!/usr/bin/python3
"""A test RTSP server on loopback (GStreamer's gst-rtsp-server): serves an H.264 mp4 file
without re-encoding, looped for as long as it runs, over RTSP/TCP to any number of clients.

usage: rtsp-server.py [--unshared] <file.mp4> <port> <mount>[=<file.mp4>][,...] [user:password]
Each mount is a camera of its own, playing its own file if one is given. Every client of a
mount shares one pipeline, a camera's; with --unshared each client gets a pipeline of its own
(GStreamer 1.22 stalls a shared mount's clients for ~10 s whenever another one joins).
Prints "ready" once it listens; for each pipeline "start <mount> <id>" when it starts the
file and "loop <mount> <id>" each time it starts it over.
"""
import sys

import gi

gi.require_version('Gst', '1.0')
gi.require_version('GstRtspServer', '1.0')
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

LOOP = Gst.SeekFlags.SEGMENT
media_ids = iter(range(1, 1_000_000_000))


def loop_forever(mount, media):
    """Plays the file in a loop: segment seeks back to the start at each end of the file keep
    the pipeline's running time going on, so players see one continuous stream. (A Python subclass of RTSPMedia breaks its signals in this binding,
    hence the bus's sync messages.)"""
    demux = media.get_element().get_by_name('demux')
    media_id = next(media_ids)

    def restart(flags):
        print(f'{"start" if flags & Gst.SeekFlags.FLUSH else "loop"} {mount} {media_id}', flush=True)
        demux.seek(1.0, Gst.Format.TIME, flags, Gst.SeekType.SET, 0, Gst.SeekType.NONE, -1)
        return False

    def on_message(_bus, message):
        if message.type == Gst.MessageType.SEGMENT_DONE:
            GLib.idle_add(restart, LOOP)

    media.connect('prepared', lambda _media: GLib.idle_add(restart, Gst.SeekFlags.FLUSH | LOOP))
    bus = media.get_element().get_parent().get_bus()
    bus.enable_sync_message_emission()
    bus.connect('sync-message', on_message)


def main():
    args = sys.argv[1:]
    shared = '--unshared' not in args
    args = [a for a in args if a != '--unshared']
    file, port, mounts = args[0], args[1], args[2].split(',')
    credentials = args[3] if len(args) > 3 else None
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address('127.0.0.1')
    server.set_service(port)
    if credentials:
        user, password = credentials.split(':', 1)
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, 'viewer')
        auth.add_basic(GstRtspServer.RTSPAuth.make_basic(user, password), token)
        server.set_auth(auth)
    for spec in mounts:
        mount, _, own_file = spec.partition('=')
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(
            f'( filesrc location="{own_file or file}" ! qtdemux name=demux ! queue '
            '! rtph264pay name=pay0 pt=96 config-interval=-1 )')
        factory.set_shared(shared)
        factory.connect('media-configure', lambda _factory, media, mount=mount: loop_forever(mount, media))
        if credentials:
            permissions = GstRtspServer.RTSPPermissions()
            permissions.add_permission_for_role('viewer', GstRtspServer.RTSP_PERM_MEDIA_FACTORY_ACCESS, True)
            permissions.add_permission_for_role('viewer', GstRtspServer.RTSP_PERM_MEDIA_FACTORY_CONSTRUCT, True)
            factory.set_permissions(permissions)
        server.get_mount_points().add_factory(mount, factory)
    if server.attach(None) == 0:
        print('could not listen', flush=True)
        sys.exit(1)
    print('ready', flush=True)
    GLib.MainLoop().run()


if __name__ == '__main__':
    main()
