"""The install tests' https:// server: TLS on 127.0.0.1 (a free port) in front of the tests'
plain HTTP server (server.rs), whose port is given, so that one handler answers both http://
and https://. Each connection carries one GET, as the plain server's `Connection: close`
answers do: its head is read, sent on, and the answer relayed back as it comes; then the TLS
session is closed in order (close_notify both ways), so that no reset cuts an answer short.
Usage: tls_relay.py CERT KEY BACKEND_PORT. Prints its port on a line of its own once it
listens, and ends when its standard input closes (the test that started it is done)."""

import socket
import ssl
import sys
import threading


def serve(conn, context, backend_port):
    conn.settimeout(30)
    try:
        client = context.wrap_socket(conn, server_side=True)
    except (OSError, ssl.SSLError):
        conn.close()
        return
    try:
        head = b""
        while b"\r\n\r\n" not in head:
            data = client.recv(65536)
            if not data:
                return
            head += data
        backend = socket.create_connection(("127.0.0.1", backend_port), timeout=30)
        with backend:
            backend.sendall(head)
            while True:
                data = backend.recv(65536)
                if not data:
                    break
                client.sendall(data)
        client.unwrap()
    except (OSError, ssl.SSLError):
        pass
    finally:
        client.close()


def main():
    cert, key, backend_port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    def accept():
        while True:
            conn, _ = listener.accept()
            threading.Thread(
                target=serve, args=(conn, context, backend_port), daemon=True
            ).start()

    threading.Thread(target=accept, daemon=True).start()
    print(listener.getsockname()[1], flush=True)
    sys.stdin.read()


main()
