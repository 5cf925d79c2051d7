import streamlit as st

st.title("Graph")
st.info("This page is being built.")
