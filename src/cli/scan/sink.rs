//! Where `scan`'s rows go: three files in a folder (Parquet, JSON lines or CSV, each table its
//! own file), or every row as a JSON line on standard output tagged with its table (`-o -`, the
//! map step of a cluster job). Each writer reads a row column by column through the one schema
//! ([`sse_replay_core::scan::schema`]), so the three formats hold the same rows. Files are
//! written through [`OutputFile`] (a temporary file renamed into place at the end; nothing is
//! left on an error), Parquet in row groups so memory stays bounded whatever the number of rows.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use sse_replay_core::recording::{OutputFile, RecordingError, WriteOptions};
use sse_replay_core::scan::{AnyRow, Kind, SCHEMA_VERSION, StreamRows, Table, Value};

/// The table formats (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "lower")]
pub enum TableFormat {
    /// Apache Parquet (`streams.parquet`, …), `schema_version` in the file metadata.
    Parquet,
    /// JSON lines (`streams.jsonl`, …), with `schema.json` beside them.
    Jsonl,
    /// CSV with a header line (`streams.csv`, …), with `schema.json` beside them.
    Csv,
}

impl TableFormat {
    /// The files' extension.
    pub fn extension(self) -> &'static str {
        match self {
            TableFormat::Parquet => "parquet",
            TableFormat::Jsonl => "jsonl",
            TableFormat::Csv => "csv",
        }
    }
}

/// Why the rows could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error(transparent)]
    Create(#[from] RecordingError),
    #[error("cannot write {path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("cannot write {path}: {source}")]
    Parquet {
        path: String,
        source: parquet::errors::ParquetError,
    },
}

impl SinkError {
    /// The output exists and `--force` was not given (usage: exit 2).
    pub fn is_exists(&self) -> bool {
        matches!(self, SinkError::Create(RecordingError::Exists { .. }))
    }
}

/// Where the rows go.
pub enum Sink {
    /// Every row on standard output as a JSON line with its `table`.
    Stdout(BufWriter<OutputFile>, Vec<u8>),
    /// One file per table in a folder.
    Folder {
        tables: Vec<TableFile>,
        /// `schema.json` for the text formats (Parquet files carry their own).
        schema: Option<PathBuf>,
        force: bool,
    },
}

impl Sink {
    /// Rows to standard output.
    pub fn stdout() -> Result<Self, SinkError> {
        let out = OutputFile::create(Path::new("-"), WriteOptions::public(false))?;
        Ok(Sink::Stdout(
            BufWriter::with_capacity(1 << 16, out),
            Vec::new(),
        ))
    }

    /// One file per table in `dir` (created when missing); an existing table file is refused
    /// unless `force`.
    pub fn folder(dir: &Path, format: TableFormat, force: bool) -> Result<Self, SinkError> {
        std::fs::create_dir_all(dir).map_err(|e| SinkError::Io {
            path: dir.display().to_string(),
            source: e,
        })?;
        let mut tables = Vec::new();
        for table in Table::ALL {
            let path = dir.join(format!("{}.{}", table.name(), format.extension()));
            tables.push(TableFile::create(&path, table, format, force)?);
        }
        let schema = (format != TableFormat::Parquet).then(|| dir.join("schema.json"));
        Ok(Sink::Folder {
            tables,
            schema,
            force,
        })
    }

    /// Write one stream's rows.
    pub fn write(&mut self, rows: &StreamRows) -> Result<(), SinkError> {
        let all = std::iter::once(AnyRow::Stream(&rows.stream))
            .chain(rows.calls.iter().map(AnyRow::Call))
            .chain(rows.findings.iter().map(AnyRow::Finding));
        match self {
            Sink::Stdout(out, line) => {
                for row in all {
                    line.clear();
                    json_row(line, &row, true);
                    out.write_all(line).map_err(|e| SinkError::Io {
                        path: "standard output".into(),
                        source: e,
                    })?;
                }
                Ok(())
            }
            Sink::Folder { tables, .. } => {
                for row in all {
                    if let Some(t) = tables.iter_mut().find(|t| t.table == row.table()) {
                        t.row(&row)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Flush, close and move every file into place.
    pub fn finish(self) -> Result<(), SinkError> {
        match self {
            Sink::Stdout(out, _) => {
                let out = out.into_inner().map_err(|e| SinkError::Io {
                    path: "standard output".into(),
                    source: e.into_error(),
                })?;
                Ok(out.commit()?)
            }
            Sink::Folder {
                tables,
                schema,
                force,
            } => {
                for t in tables {
                    t.finish()?;
                }
                if let Some(path) = schema {
                    let text =
                        serde_json::to_string_pretty(&sse_replay_core::scan::schema::schema_json())
                            .unwrap_or_default()
                            + "\n";
                    sse_replay_core::recording::write_file(
                        &path,
                        text.as_bytes(),
                        WriteOptions::public(force),
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// One table's file.
pub struct TableFile {
    table: Table,
    path: String,
    out: TableOut,
    line: Vec<u8>,
}

enum TableOut {
    Text {
        out: BufWriter<OutputFile>,
        csv: bool,
    },
    Parquet(Box<ParquetTable>),
}

impl TableFile {
    fn create(
        path: &Path,
        table: Table,
        format: TableFormat,
        force: bool,
    ) -> Result<Self, SinkError> {
        let file = OutputFile::create(path, WriteOptions::public(force))?;
        let name = path.display().to_string();
        let out = match format {
            TableFormat::Parquet => {
                TableOut::Parquet(Box::new(ParquetTable::new(file, table).map_err(|e| {
                    SinkError::Parquet {
                        path: name.clone(),
                        source: e,
                    }
                })?))
            }
            TableFormat::Jsonl | TableFormat::Csv => {
                let mut out = BufWriter::with_capacity(1 << 16, file);
                let csv = format == TableFormat::Csv;
                if csv {
                    let mut head = Vec::new();
                    for (i, c) in table.columns().iter().enumerate() {
                        if i > 0 {
                            head.push(b',');
                        }
                        head.extend_from_slice(c.name.as_bytes());
                    }
                    head.extend_from_slice(b"\r\n");
                    out.write_all(&head).map_err(|e| SinkError::Io {
                        path: name.clone(),
                        source: e,
                    })?;
                }
                TableOut::Text { out, csv }
            }
        };
        Ok(Self {
            table,
            path: name,
            out,
            line: Vec::new(),
        })
    }

    fn row(&mut self, row: &AnyRow<'_>) -> Result<(), SinkError> {
        let path = &self.path;
        match &mut self.out {
            TableOut::Text { out, csv } => {
                self.line.clear();
                if *csv {
                    csv_row(&mut self.line, row);
                } else {
                    json_row(&mut self.line, row, false);
                }
                out.write_all(&self.line).map_err(|e| SinkError::Io {
                    path: path.clone(),
                    source: e,
                })
            }
            TableOut::Parquet(p) => p.row(row).map_err(|e| SinkError::Parquet {
                path: path.clone(),
                source: e,
            }),
        }
    }

    fn finish(self) -> Result<(), SinkError> {
        let path = self.path;
        let file = match self.out {
            TableOut::Text { out, .. } => out.into_inner().map_err(|e| SinkError::Io {
                path: path.clone(),
                source: e.into_error(),
            })?,
            TableOut::Parquet(p) => p.finish().map_err(|e| SinkError::Parquet {
                path: path.clone(),
                source: e,
            })?,
        };
        Ok(file.commit()?)
    }
}

// ---------------------------------------------------------------------------------------------
// JSON lines and CSV
// ---------------------------------------------------------------------------------------------

/// One row as a JSON object and a newline: `{"table":…,` first when `tagged`, then every
/// column in schema order (`null` for a null value).
fn json_row(out: &mut Vec<u8>, row: &AnyRow<'_>, tagged: bool) {
    out.push(b'{');
    if tagged {
        out.extend_from_slice(b"\"table\":\"");
        out.extend_from_slice(row.table().name().as_bytes());
        out.extend_from_slice(b"\",");
    }
    for (i, c) in row.table().columns().iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_string(out, &c.name);
        out.push(b':');
        match row.value(i) {
            Value::Null => out.extend_from_slice(b"null"),
            Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            Value::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
            Value::Text(s) => json_string(out, s),
            Value::TextList(v) => json_list(out, v),
        }
    }
    out.extend_from_slice(b"}\n");
}

fn json_list(out: &mut Vec<u8>, v: &[String]) {
    // Writing to a Vec cannot fail.
    serde_json::to_writer(&mut *out, v).ok();
}

fn json_string(out: &mut Vec<u8>, s: &str) {
    // Writing a &str to a Vec cannot fail.
    serde_json::to_writer(&mut *out, s).ok();
}

/// One row as a CSV record (RFC 4180, CRLF): null is an empty field, an empty text `""`, text
/// with a comma, quote, line break or surrounding space quoted with its quotes doubled. A text
/// that a spreadsheet would run as a formula is neutralised first ([`csv_text`]).
fn csv_row(out: &mut Vec<u8>, row: &AnyRow<'_>) {
    for i in 0..row.table().columns().len() {
        if i > 0 {
            out.push(b',');
        }
        match row.value(i) {
            Value::Null => {}
            Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            Value::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
            Value::Text(_) | Value::TextList(_) => {
                // A list is its JSON array as text (`["a","b"]`).
                let list;
                let s = match row.value(i) {
                    Value::TextList(v) => {
                        list = serde_json::to_string(v).unwrap_or_default();
                        list.as_str()
                    }
                    Value::Text(s) => s,
                    _ => "",
                };
                let s = csv_text(s);
                let quote = s.is_empty()
                    || s.contains([',', '"', '\n', '\r'])
                    || s.starts_with(' ')
                    || s.ends_with(' ');
                if quote {
                    out.push(b'"');
                    out.extend_from_slice(s.replace('"', "\"\"").as_bytes());
                    out.push(b'"');
                } else {
                    out.extend_from_slice(s.as_bytes());
                }
            }
        }
    }
    out.extend_from_slice(b"\r\n");
}

/// Characters that make a spreadsheet read a cell as a formula when they start it (OWASP's CSV
/// injection list).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text cell as CSV holds it: one starting with a formula character ([`FORMULA_STARTS`]) gets
/// a leading `'`, so a spreadsheet shows it as text instead of running it (a tool named
/// `=HYPERLINK(…)` in a capture); one starting with `'` gets another, so that a reader removes
/// exactly one leading `'` from any cell that has one to get the value back.
fn csv_text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.starts_with(FORMULA_STARTS) || s.starts_with('\'') {
        std::borrow::Cow::Owned(format!("'{s}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

// ---------------------------------------------------------------------------------------------
// Parquet
// ---------------------------------------------------------------------------------------------

/// Rows in a row group before it is written: as analytics engines want them (DuckDB, Spark and
/// polars read a row group as one unit of work; tiny groups cost a footer entry and a seek
/// each), while the rows held before a flush stay bounded whatever the number of files.
const ROW_GROUP_ROWS: usize = 64 * 1024;
/// Text bytes held before the row group is written, whatever its rows: long messages or many
/// calls end a group early, so memory stays bounded by bytes as well as rows.
const ROW_GROUP_TEXT_BYTES: usize = 64 << 20;

/// One column's values of the row group being filled; `defs` are Parquet's definition levels
/// (1 = a value, 0 = null) for a nullable column.
enum ColumnBuf {
    Bool(Vec<bool>, Vec<i16>),
    Int(Vec<i64>, Vec<i16>),
    Text(Vec<ByteArray>, Vec<i16>),
    /// A list column's elements, definition levels ([`LIST_NULL`], [`LIST_EMPTY`],
    /// [`LIST_ELEMENT`]) and repetition levels (0: a row's first entry, 1: the next element of
    /// the same list).
    List(Vec<ByteArray>, Vec<i16>, Vec<i16>),
}

/// A list column's definition levels: the list is null, empty, or this entry is an element.
const LIST_NULL: i16 = 0;
const LIST_EMPTY: i16 = 1;
const LIST_ELEMENT: i16 = 2;

/// A nullable list of strings as Parquet's LIST logical type prescribes it (three levels:
/// `optional group NAME (LIST) { repeated group list { required binary element (STRING) } }`),
/// which DuckDB, Spark, polars and pyarrow all read as a list column.
fn list_type(name: &str, repetition: Repetition) -> parquet::errors::Result<Arc<Type>> {
    let element = Type::primitive_type_builder("element", PhysicalType::BYTE_ARRAY)
        .with_logical_type(Some(LogicalType::String))
        .with_repetition(Repetition::REQUIRED)
        .build()?;
    let list = Type::group_type_builder("list")
        .with_repetition(Repetition::REPEATED)
        .with_fields(vec![Arc::new(element)])
        .build()?;
    Type::group_type_builder(name)
        .with_logical_type(Some(LogicalType::List))
        .with_repetition(repetition)
        .with_fields(vec![Arc::new(list)])
        .build()
        .map(Arc::new)
}

/// A table written as Parquet: the low-level column writer of the `parquet` crate (no Arrow
/// arrays in between), Snappy-compressed, one row group per [`ROW_GROUP_ROWS`] rows.
struct ParquetTable {
    writer: SerializedFileWriter<BufWriter<OutputFile>>,
    table: Table,
    columns: Vec<ColumnBuf>,
    rows: usize,
    text_bytes: usize,
}

impl ParquetTable {
    fn new(file: OutputFile, table: Table) -> parquet::errors::Result<Self> {
        let fields = table
            .columns()
            .iter()
            .map(|c| {
                let repetition = if c.nullable {
                    Repetition::OPTIONAL
                } else {
                    Repetition::REQUIRED
                };
                let t = match c.kind {
                    Kind::Bool => Type::primitive_type_builder(&c.name, PhysicalType::BOOLEAN),
                    Kind::Int => Type::primitive_type_builder(&c.name, PhysicalType::INT64),
                    Kind::Text => Type::primitive_type_builder(&c.name, PhysicalType::BYTE_ARRAY)
                        .with_logical_type(Some(LogicalType::String)),
                    Kind::TextList => return list_type(&c.name, repetition),
                };
                t.with_repetition(repetition).build().map(Arc::new)
            })
            .collect::<parquet::errors::Result<Vec<_>>>()?;
        let schema = Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("sse-replay {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(vec![
                KeyValue::new("schema_version".into(), SCHEMA_VERSION.to_string()),
                KeyValue::new("table".into(), table.name().to_owned()),
            ]))
            .build();
        let writer = SerializedFileWriter::new(
            BufWriter::with_capacity(1 << 16, file),
            Arc::new(schema),
            Arc::new(props),
        )?;
        let columns = table
            .columns()
            .iter()
            .map(|c| match c.kind {
                Kind::Bool => ColumnBuf::Bool(Vec::new(), Vec::new()),
                Kind::Int => ColumnBuf::Int(Vec::new(), Vec::new()),
                Kind::Text => ColumnBuf::Text(Vec::new(), Vec::new()),
                Kind::TextList => ColumnBuf::List(Vec::new(), Vec::new(), Vec::new()),
            })
            .collect();
        Ok(Self {
            writer,
            table,
            columns,
            rows: 0,
            text_bytes: 0,
        })
    }

    fn row(&mut self, row: &AnyRow<'_>) -> parquet::errors::Result<()> {
        for (i, col) in self.columns.iter_mut().enumerate() {
            let v = row.value(i);
            let def = i16::from(!matches!(v, Value::Null));
            match (col, v) {
                (ColumnBuf::Bool(vals, defs), v) => {
                    if let Value::Bool(b) = v {
                        vals.push(b);
                    }
                    defs.push(def);
                }
                (ColumnBuf::Int(vals, defs), v) => {
                    if let Value::Int(n) = v {
                        vals.push(n);
                    }
                    defs.push(def);
                }
                (ColumnBuf::Text(vals, defs), v) => {
                    if let Value::Text(s) = v {
                        self.text_bytes += s.len();
                        vals.push(ByteArray::from(s));
                    }
                    defs.push(def);
                }
                (ColumnBuf::List(vals, defs, reps), v) => match v {
                    Value::TextList(items) if !items.is_empty() => {
                        for (k, item) in items.iter().enumerate() {
                            self.text_bytes += item.len();
                            vals.push(ByteArray::from(item.as_str()));
                            defs.push(LIST_ELEMENT);
                            reps.push(i16::from(k > 0));
                        }
                    }
                    Value::TextList(_) => {
                        defs.push(LIST_EMPTY);
                        reps.push(0);
                    }
                    _ => {
                        defs.push(LIST_NULL);
                        reps.push(0);
                    }
                },
            }
        }
        self.rows += 1;
        if self.rows >= ROW_GROUP_ROWS || self.text_bytes >= ROW_GROUP_TEXT_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Write the buffered rows as one row group.
    fn flush(&mut self) -> parquet::errors::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.writer.next_row_group()?;
        for (buf, column) in self.columns.iter_mut().zip(self.table.columns()) {
            let Some(mut w) = group.next_column()? else {
                break;
            };
            // A required column has no definition levels (its values are never null).
            let nullable = column.nullable;
            match buf {
                ColumnBuf::Bool(v, d) => {
                    let defs = nullable.then_some(d.as_slice());
                    w.typed::<BoolType>().write_batch(v, defs, None)?;
                    v.clear();
                    d.clear();
                }
                ColumnBuf::Int(v, d) => {
                    let defs = nullable.then_some(d.as_slice());
                    w.typed::<Int64Type>().write_batch(v, defs, None)?;
                    v.clear();
                    d.clear();
                }
                ColumnBuf::Text(v, d) => {
                    let defs = nullable.then_some(d.as_slice());
                    w.typed::<ByteArrayType>().write_batch(v, defs, None)?;
                    v.clear();
                    d.clear();
                }
                ColumnBuf::List(v, d, r) => {
                    w.typed::<ByteArrayType>()
                        .write_batch(v, Some(d), Some(r))?;
                    v.clear();
                    d.clear();
                    r.clear();
                }
            }
            w.close()?;
        }
        group.close()?;
        self.rows = 0;
        self.text_bytes = 0;
        Ok(())
    }

    fn finish(mut self) -> parquet::errors::Result<OutputFile> {
        self.flush()?;
        let out = self.writer.into_inner()?;
        out.into_inner()
            .map_err(|e| parquet::errors::ParquetError::External(Box::new(e.into_error())))
    }
}
