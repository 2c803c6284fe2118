"""A loopback TCP proxy that makes a link slow or cuts its connections.

    flaky_proxy.py LISTEN_PORT TARGET_PORT --log FILE [--delay-ms N] [--cut-after BYTES]

Every connection to 127.0.0.1:LISTEN_PORT is forwarded to 127.0.0.1:TARGET_PORT.
--delay-ms holds each chunk that long before forwarding it (each direction);
--cut-after aborts a connection (both sides, at once) once it has carried
that many bytes, counting both directions. One line per connection in FILE
when it ends: "<n> <bytes> cut" or "<n> <bytes> closed", so a test can tell
that the fault did reach the client.
"""

import argparse
import asyncio


class Link:
    def __init__(self, number, cut_after):
        self.number = number
        self.carried = 0
        self.cut_after = cut_after
        self.cut = False
        self.writers = []

    def abort(self):
        self.cut = True
        for w in self.writers:
            w.transport.abort()


async def pump(reader, writer, link, delay):
    try:
        while not link.cut:
            data = await reader.read(65536)
            if not data:
                break
            if delay:
                await asyncio.sleep(delay)
            if link.cut_after and link.carried + len(data) > link.cut_after:
                link.abort()
                break
            link.carried += len(data)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        if not link.cut:
            writer.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("listen", type=int)
    ap.add_argument("target", type=int)
    ap.add_argument("--log", required=True)
    ap.add_argument("--delay-ms", type=int, default=0)
    ap.add_argument("--cut-after", type=int, default=0)
    args = ap.parse_args()
    delay = args.delay_ms / 1000
    count = 0

    async def handle(client_r, client_w):
        nonlocal count
        count += 1
        link = Link(count, args.cut_after)
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", args.target)
        except OSError:
            client_w.transport.abort()
            return
        link.writers = [client_w, server_w]
        await asyncio.gather(
            pump(client_r, server_w, link, delay),
            pump(server_r, client_w, link, delay),
        )
        with open(args.log, "a") as log:
            log.write(f"{link.number} {link.carried} {'cut' if link.cut else 'closed'}\n")

    server = await asyncio.start_server(handle, "127.0.0.1", args.listen)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
