//! `concat-all`: ignore the index and join every fragment of every call into one string
//! (the seed's counter-example 2: `{…}{…}`).
//!
//! While every fragment is of one call, the joined text is that call's (or a piece of it): it
//! keeps where it is and shares the correct call's text at the end. From the first fragment of a
//! second call on, the text differs from any call's, and what follows is kept as its own copy.

use super::{FragmentAt, NaiveCall, NaiveStrategy, Report, Spans, Strategy, StreamEnd, args_text};
use crate::accumulate::parse_once;
use crate::fact::Fragment;
use crate::text::SharedText;

/// All arguments text of the stream, joined, parsed once at the end.
#[derive(Clone, Debug, Default)]
pub(super) struct ConcatAll {
    /// The call of the first fragments, and where their texts are in it: the start of the
    /// joined text.
    first: Option<(u32, Spans)>,
    /// A fragment of another call came: the joined text from there on.
    rest: Option<String>,
}

impl NaiveStrategy for ConcatAll {
    fn strategy(&self) -> Strategy {
        Strategy::ConcatAll
    }

    fn on_fragment(&mut self, fragment: &Fragment, at: FragmentAt) {
        let text = args_text(fragment);
        match (&mut self.first, &mut self.rest) {
            (_, Some(rest)) => rest.push_str(text),
            (Some((call, spans)), None) if *call == at.call => {
                spans.push(at.args_start, text.len())
            }
            (Some(_), None) => self.rest = Some(text.to_owned()),
            (None, None) => {
                let mut spans = Spans::default();
                spans.push(at.args_start, text.len());
                self.first = Some((at.call, spans));
            }
        }
    }

    fn finish(self: Box<Self>, end: &StreamEnd<'_>) -> Report {
        let mut r = Report::new(Strategy::ConcatAll);
        // Without a fragment there is nothing to join, and no call (not one empty call beside
        // a correct answer of none).
        let Some((call, spans)) = self.first else {
            return r;
        };
        let head = end.texts.resolve(call, &spans);
        let joined = match self.rest {
            None => head,
            Some(rest) => join(&head, rest),
        };
        let (parsed, _) = parse_once(&joined);
        r.calls.push(NaiveCall {
            label: "everything".into(),
            id: String::new(),
            name: String::new(),
            raw_arguments: joined,
            parsed,
            chunk: end.end_chunk,
            at_end: true,
        });
        r
    }
}

/// `head` then `rest`, written once into the shared text (no third copy while it is built).
fn join(head: &str, rest: String) -> SharedText {
    let n = head.len() + rest.len();
    let built = arcstr::ArcStr::init_with(n, |buf| {
        let (a, b) = buf.split_at_mut(head.len());
        a.copy_from_slice(head.as_bytes());
        b.copy_from_slice(rest.as_bytes());
    });
    // Two texts joined are text: the check cannot fail, but costs nothing to honour.
    match built {
        Ok(text) => SharedText::full(text),
        Err(_) => SharedText::from(format!("{head}{rest}")),
    }
}
