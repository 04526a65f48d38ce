#!/usr/bin/python3
"""A test RTSP server on loopback (GStreamer's gst-rtsp-server): serves an H.264 mp4 file
without re-encoding, looped for as long as it runs, over RTSP/TCP to any number of clients.

usage: rtsp-server.py <file.mp4> <port> <mount> [user:password]
Prints "ready" on stdout once it listens.
"""
import sys

import gi

gi.require_version('Gst', '1.0')
gi.require_version('GstRtspServer', '1.0')
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

LOOP = Gst.SeekFlags.SEGMENT


def loop_forever(_factory, media):
    """Every client shares one pipeline (a camera, not video on demand). Segment seeks back
    to the start at each end of the file keep its running time going on, so players see one
    continuous stream. (A Python subclass of RTSPMedia breaks its signals in this binding,
    hence the bus's sync messages.)"""
    demux = media.get_element().get_by_name('demux')

    def restart(flags):
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
    file, port, mount = sys.argv[1], sys.argv[2], sys.argv[3]
    credentials = sys.argv[4] if len(sys.argv) > 4 else None
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address('127.0.0.1')
    server.set_service(port)
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(
        f'( filesrc location="{file}" ! qtdemux name=demux ! queue '
        '! rtph264pay name=pay0 pt=96 config-interval=-1 )')
    factory.set_shared(True)
    factory.connect('media-configure', loop_forever)
    if credentials:
        user, password = credentials.split(':', 1)
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string(GstRtspServer.RTSP_TOKEN_MEDIA_FACTORY_ROLE, 'viewer')
        auth.add_basic(GstRtspServer.RTSPAuth.make_basic(user, password), token)
        server.set_auth(auth)
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
