//! A connection's message loop with the server's replies batched. pgwire's own loop
//! (`pgwire::tokio::process_socket`, pgwire 0.30, MIT OR Apache-2.0) flushes the socket after
//! nearly every backend message — ParseComplete, BindComplete, CommandComplete, ReadyForQuery
//! each a system call, 16 per four-statement pgbench transaction — so a client waiting for one
//! answer wakes several times. This loop restates pgwire's for plain TCP (its codec is private
//! to it): the same decoding per connection state, each message to its handler, an error
//! answered with ErrorResponse and (outside the extended protocol) ReadyForQuery, messages
//! skipped until Sync after an extended-protocol error, SSL requests refused, `COPY … FROM
//! STDIN`'s CopyData, CopyDone and CopyFail to the connection's handlers. The difference: replies go into a buffer that is written out when no further
//! complete client message is waiting (the client then waits for the answers), when it passes
//! 64 KiB, and when the connection ends.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, BytesMut};
use futures::{Sink, SinkExt};
use pgwire::api::auth::StartupHandler;
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::{ClientInfo, ClientPortalStore, DefaultClient, PgWireConnectionState};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::response::{ReadyForQuery, SslResponse, TransactionStatus};
use pgwire::messages::startup::{SslRequest, Startup};
use pgwire::messages::{Message, PgWireBackendMessage, PgWireFrontendMessage};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::shards::Placement;
use super::wire::{Connection, Prepared};

/// A client's byte stream: a TCP connection or a Unix-domain socket's.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send + Sync + std::os::fd::AsRawFd {}

impl<S: AsyncRead + AsyncWrite + Unpin + Send + Sync + std::os::fd::AsRawFd> Stream for S {}

/// Replies held back at most this long before they are written (bytes).
const WRITE_BATCH: usize = 64 * 1024;

/// A client connection as the handlers see it: its state and the replies not yet written.
/// `S` is the byte stream: a TCP connection or a Unix-domain socket's.
pub struct Client<S> {
    io: S,
    read: BytesMut,
    write: BytesMut,
    info: DefaultClient<Prepared>,
    /// Socket writes of held-back replies so far.
    writes: u64,
    /// The connection's handlers: ReadyForQuery reports its session's status.
    conn: Arc<Connection>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Client<S> {
    /// The next message from the client, decoded as the connection's state expects; `None`
    /// when the client closed the connection.
    async fn next_message(&mut self) -> std::io::Result<Option<PgWireFrontendMessage>> {
        loop {
            if let Some(m) = self.decode().map_err(std::io::Error::other)? {
                return Ok(Some(m));
            }
            if !self.write.is_empty() {
                self.write_out().await?;
            }
            if self.io.read_buf(&mut self.read).await? == 0 {
                return Ok(None);
            }
        }
    }

    /// pgwire's server codec: SSL request, then startup, then typed messages.
    fn decode(&mut self) -> PgWireResult<Option<PgWireFrontendMessage>> {
        match self.info.state() {
            PgWireConnectionState::AwaitingSslRequest => {
                if self.read.remaining() < SslRequest::BODY_SIZE {
                    return Ok(None);
                }
                self.info.set_state(PgWireConnectionState::AwaitingStartup);
                Ok(Some(PgWireFrontendMessage::SslRequest(SslRequest::decode(
                    &mut self.read,
                )?)))
            }
            PgWireConnectionState::AwaitingStartup => {
                Ok(Startup::decode(&mut self.read)?.map(PgWireFrontendMessage::Startup))
            }
            _ => PgWireFrontendMessage::decode(&mut self.read),
        }
    }

    /// Whether a whole typed message is already waiting in the read buffer.
    fn has_complete_message(&self) -> bool {
        if matches!(
            self.info.state(),
            PgWireConnectionState::AwaitingSslRequest | PgWireConnectionState::AwaitingStartup
        ) || self.read.len() < 5
        {
            return false;
        }
        let len = u32::from_be_bytes([self.read[1], self.read[2], self.read[3], self.read[4]]);
        self.read.len() > len as usize
    }

    /// Writes the held-back replies.
    async fn write_out(&mut self) -> std::io::Result<()> {
        if self.write.is_empty() {
            return Ok(());
        }
        self.writes += 1;
        self.io.write_all(&self.write).await?;
        self.write.clear();
        Ok(())
    }

    fn poll_write_out(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if !self.write.is_empty() {
            self.writes += 1;
        }
        while !self.write.is_empty() {
            match Pin::new(&mut self.io).poll_write(cx, &self.write) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => self.write.advance(n),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Sink<PgWireBackendMessage> for Client<S> {
    type Error = std::io::Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.write.len() >= WRITE_BATCH {
            return this.poll_write_out(cx);
        }
        Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, item: PgWireBackendMessage) -> std::io::Result<()> {
        let this = self.get_mut();
        let item = match item {
            PgWireBackendMessage::ReadyForQuery(_) => {
                let status = this.conn.status();
                this.info.set_transaction_status(status);
                PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(status))
            }
            other => other,
        };
        item.encode(&mut this.write).map_err(std::io::Error::other)
    }

    /// Held back: the loop writes the replies out when the client waits for them.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        match this.poll_write_out(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.io).poll_shutdown(cx),
            other => other,
        }
    }
}

impl<S> ClientInfo for Client<S> {
    fn socket_addr(&self) -> std::net::SocketAddr {
        self.info.socket_addr()
    }

    fn is_secure(&self) -> bool {
        false
    }

    fn state(&self) -> PgWireConnectionState {
        self.info.state()
    }

    fn set_state(&mut self, new_state: PgWireConnectionState) {
        self.info.set_state(new_state);
    }

    fn metadata(&self) -> &std::collections::HashMap<String, String> {
        self.info.metadata()
    }

    fn metadata_mut(&mut self) -> &mut std::collections::HashMap<String, String> {
        self.info.metadata_mut()
    }

    fn transaction_status(&self) -> TransactionStatus {
        self.info.transaction_status()
    }

    fn set_transaction_status(&mut self, new_status: TransactionStatus) {
        self.info.set_transaction_status(new_status);
    }
}

impl<S> ClientPortalStore for Client<S> {
    type PortalStore = <DefaultClient<Prepared> as ClientPortalStore>::PortalStore;

    fn portal_store(&self) -> &Self::PortalStore {
        self.info.portal_store()
    }
}

/// Serves one TCP client until it disconnects (see the module documentation); returns the
/// number of socket writes its answers took. With a `placement`, its serving thread follows
/// the client ([`Placement::after_message`]).
pub async fn serve_tcp(
    socket: tokio::net::TcpStream,
    conn: Arc<Connection>,
    placement: Option<Placement>,
) -> std::io::Result<u64> {
    socket.set_nodelay(true)?;
    let addr = socket.peer_addr()?;
    serve(socket, addr, conn, placement).await
}

/// Serves one client of the Unix-domain socket until it disconnects, as [`serve_tcp`]. Such a
/// client has no network address: the handlers see `127.0.0.1:0`.
pub async fn serve_unix(
    socket: tokio::net::UnixStream,
    conn: Arc<Connection>,
    placement: Option<Placement>,
) -> std::io::Result<u64> {
    serve(
        socket,
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        conn,
        placement,
    )
    .await
}

/// The message loop over any byte stream; `addr` is the client's address.
async fn serve<S>(
    socket: S,
    addr: std::net::SocketAddr,
    conn: Arc<Connection>,
    mut placement: Option<Placement>,
) -> std::io::Result<u64>
where
    S: Stream,
{
    let fd = socket.as_raw_fd();
    let mut client = Client {
        io: socket,
        read: BytesMut::with_capacity(8192),
        write: BytesMut::with_capacity(8192),
        info: DefaultClient::new(addr, false),
        writes: 0,
        conn: conn.clone(),
    };
    // Declared after the client, so dropped before it: the descriptor is forgotten before
    // the socket is closed.
    let _attached = Attached::new(&conn, fd);
    while let Some(message) = client.next_message().await? {
        if let Some(placement) = placement.as_mut() {
            placement.after_message(fd);
        }
        match message {
            PgWireFrontendMessage::SslRequest(Some(_)) => {
                client
                    .send(PgWireBackendMessage::SslResponse(SslResponse::Refuse))
                    .await?;
            }
            PgWireFrontendMessage::SslRequest(None) => {}
            message => {
                let extended = message.is_extended_query();
                if let Err(e) = process_message(message, &mut client, &conn).await {
                    conn.on_error().await;
                    if process_error(&mut client, e, extended).await? {
                        client.close().await?;
                        return Ok(client.writes);
                    }
                }
            }
        }
        if !client.has_complete_message() {
            client.write_out().await?;
        }
    }
    client.write_out().await?;
    Ok(client.writes)
}

/// A connection's socket attached to its [`super::database::ClosingProbe`] while served.
struct Attached<'a>(&'a Connection);

impl<'a> Attached<'a> {
    fn new(conn: &'a Connection, fd: i32) -> Attached<'a> {
        conn.socket().attach(fd);
        Attached(conn)
    }
}

impl Drop for Attached<'_> {
    fn drop(&mut self) {
        self.0.socket().detach();
    }
}

/// One message to its handler, as pgwire's loop does.
async fn process_message<S: Stream>(
    message: PgWireFrontendMessage,
    client: &mut Client<S>,
    conn: &Arc<Connection>,
) -> PgWireResult<()> {
    match client.state() {
        PgWireConnectionState::AwaitingStartup
        | PgWireConnectionState::AuthenticationInProgress => {
            conn.on_startup(client, message).await?;
        }
        // After an extended-protocol error: messages are skipped until Sync.
        PgWireConnectionState::AwaitingSync => {
            if let PgWireFrontendMessage::Sync(sync) = message {
                conn.on_sync(client, sync).await?;
                client.set_state(PgWireConnectionState::ReadyForQuery);
            }
        }
        // COPY … FROM STDIN (started by a simple query): rows, then its end.
        PgWireConnectionState::CopyInProgress(_) => match message {
            PgWireFrontendMessage::CopyData(data) => conn.on_copy_data(&data.data),
            PgWireFrontendMessage::CopyDone(_) => {
                client.set_state(PgWireConnectionState::ReadyForQuery);
                let tag = conn.on_copy_done().await?;
                client
                    .feed(PgWireBackendMessage::CommandComplete(tag.into()))
                    .await?;
                client
                    .feed(PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(
                        conn.status(),
                    )))
                    .await?;
            }
            PgWireFrontendMessage::CopyFail(fail) => {
                client.set_state(PgWireConnectionState::ReadyForQuery);
                return Err(conn.on_copy_fail(&fail.message));
            }
            _ => {}
        },
        _ => match message {
            PgWireFrontendMessage::Query(query) => conn.on_query(client, query).await?,
            PgWireFrontendMessage::Parse(parse) => conn.on_parse(client, parse).await?,
            PgWireFrontendMessage::Bind(bind) => conn.on_bind(client, bind).await?,
            PgWireFrontendMessage::Execute(execute) => conn.on_execute(client, execute).await?,
            PgWireFrontendMessage::Describe(describe) => {
                match described_cursor(client, conn, &describe).await {
                    Some(answer) => client.feed(answer).await?,
                    None => conn.on_describe(client, describe).await?,
                }
            }
            PgWireFrontendMessage::Flush(flush) => conn.on_flush(client, flush).await?,
            PgWireFrontendMessage::Sync(sync) => conn.on_sync(client, sync).await?,
            PgWireFrontendMessage::Close(close) => conn.on_close(client, close).await?,
            _ => {}
        },
    }
    Ok(())
}

/// A Describe of a portal that is no portal of the protocol's but one of the session's SQL
/// cursors (`DECLARE name CURSOR …`): its description ([`Connection::cursor_description`]).
async fn described_cursor<S: Stream>(
    client: &Client<S>,
    conn: &Connection,
    describe: &pgwire::messages::extendedquery::Describe,
) -> Option<PgWireBackendMessage> {
    let name = describe.name.as_deref().filter(|n| !n.is_empty())?;
    use pgwire::api::store::PortalStore;
    if describe.target_type != b'P' || client.portal_store().get_portal(name).is_some() {
        return None;
    }
    conn.cursor_description(client, name).await
}

/// Answers an error as pgwire's loop does; `true`: it was fatal, the connection ends.
async fn process_error<S: Stream>(
    client: &mut Client<S>,
    error: PgWireError,
    extended: bool,
) -> std::io::Result<bool> {
    let info: ErrorInfo = error.into();
    let fatal = info.is_fatal();
    client
        .feed(PgWireBackendMessage::ErrorResponse(info.into()))
        .await?;
    let status = client.transaction_status().to_error_state();
    client.set_transaction_status(status);
    if extended {
        client.set_state(PgWireConnectionState::AwaitingSync);
    } else {
        client.set_state(PgWireConnectionState::ReadyForQuery);
        client
            .feed(PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(
                status,
            )))
            .await?;
    }
    Ok(fatal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::database::Shared;

    /// Reads backend messages until ReadyForQuery; returns their type bytes.
    async fn read_until_ready<S: AsyncRead + Unpin>(s: &mut S, buf: &mut Vec<u8>) -> Vec<u8> {
        let mut types = Vec::new();
        loop {
            while buf.len() >= 5 {
                let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
                if buf.len() < 1 + len {
                    break;
                }
                let t = buf[0];
                types.push(t);
                buf.drain(..1 + len);
                if t == b'Z' {
                    return types;
                }
            }
            let mut chunk = [0u8; 4096];
            let n = s.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the server closed the connection");
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// A startup, one simple query, Terminate: the backend's message types per answer.
    async fn one_query<S: AsyncRead + AsyncWrite + Unpin>(c: &mut S) {
        // Startup, protocol 3.0, user postgres (trust).
        let mut body = 196_608u32.to_be_bytes().to_vec();
        body.extend_from_slice(b"user\0postgres\0\0");
        let mut startup = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        startup.extend_from_slice(&body);
        c.write_all(&startup).await.unwrap();
        let mut buf = Vec::new();
        let types = read_until_ready(c, &mut buf).await;
        assert_eq!(types.first(), Some(&b'R'));
        // A simple query: RowDescription, DataRow, CommandComplete, ReadyForQuery.
        let q = b"SELECT 1\0";
        let mut msg = vec![b'Q'];
        msg.extend_from_slice(&((q.len() + 4) as u32).to_be_bytes());
        msg.extend_from_slice(q);
        c.write_all(&msg).await.unwrap();
        assert_eq!(read_until_ready(c, &mut buf).await, b"TDCZ");
        c.write_all(&[b'X', 0, 0, 0, 4]).await.unwrap();
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn each_answer_is_one_socket_write() {
        runtime().block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let shared = Arc::new(Shared::new(std::time::Duration::from_secs(2)));
            let server = tokio::spawn(async move {
                let (socket, _) = listener.accept().await.unwrap();
                serve_tcp(socket, Connection::new(shared, None), None)
                    .await
                    .unwrap()
            });
            let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
            one_query(&mut c).await;
            drop(c);
            // Two answers, two writes (pgwire's loop wrote the query's answer in three).
            assert_eq!(server.await.unwrap(), 2);
        });
    }

    #[test]
    fn a_unix_socket_client_is_served_as_a_tcp_client_is() {
        let dir =
            std::env::temp_dir().join(format!("isopredict-socket-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(".s.PGSQL.5432");
        let _ = std::fs::remove_file(&path);
        runtime().block_on(async {
            let listener = tokio::net::UnixListener::bind(&path).unwrap();
            let shared = Arc::new(Shared::new(std::time::Duration::from_secs(2)));
            let server = tokio::spawn(async move {
                let (socket, _) = listener.accept().await.unwrap();
                serve_unix(socket, Connection::new(shared, None), None)
                    .await
                    .unwrap()
            });
            let mut c = tokio::net::UnixStream::connect(&path).await.unwrap();
            one_query(&mut c).await;
            drop(c);
            assert_eq!(server.await.unwrap(), 2);
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}
